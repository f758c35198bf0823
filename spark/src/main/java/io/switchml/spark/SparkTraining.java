package io.switchml.spark;

import io.switchml.client.SwitchMLConfig;
import io.switchml.launch.WorkerConnection;
import io.switchml.training.Aggregation;
import io.switchml.training.FashionMnist;
import io.switchml.training.TrainPlan;
import io.switchml.training.TrainRunner;
import io.switchml.training.TrainWorker;
import io.switchml.training.TrainedParameters;
import io.switchml.training.TrainingSummary;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

/**
 * Data-parallel DJL training of the Fashion-MNIST classifier from a {@code Dataset<Row>} ({@link FashionMnistRows}):
 * one barrier stage ({@link BarrierAllReduce}) of {@code workers} tasks, each training on its partition with the
 * {@code GradientSynchronizer}, as a {@code switchml train} worker process does; the driver gets rank 0's
 * parameters and checks that every rank's are identical.
 */
public final class SparkTraining {
    private SparkTraining() {
    }

    /**
     * Trains on {@code rows}, repartitioned into {@code workers} partitions (one rank each; every rank trains on as
     * many images as the smallest partition holds, so all run the same number of steps). Rank 0 measures test
     * accuracy on {@code test} after each epoch. The plan's aggregation decides the all-reduce; its
     * {@code switchml.*} settings and {@code options}' apply to the workers.
     *
     * @param target the test accuracy whose time the summary reports
     */
    public static SparkTrainingResult train(Dataset<Row> rows, FashionMnist.Split test, TrainPlan plan, int workers,
                                            BarrierOptions options, double target) {
        if (plan.aggregation().isNone()) {
            throw new IllegalArgumentException("aggregation none trains one process alone; on Spark use switchml, ring or ps");
        }
        if (workers < 1) {
            throw new IllegalArgumentException("need at least 1 worker, not " + workers);
        }
        JavaRDD<Row> data = rows.javaRDD();
        if (data.getNumPartitions() != workers) {
            data = data.repartition(workers);
        }
        JavaSparkContext spark = JavaSparkContext.fromSparkContext(data.context());
        Broadcast<FashionMnist.Split> testSet = spark.broadcast(test);
        BarrierOptions stage = options.withAlgorithm(plan.aggregation().id()).withSettings(plan.config())
                .withCompression(plan.effectiveCompression());
        long start = System.nanoTime();
        List<RankTraining> ranks;
        try {
            ranks = BarrierAllReduce.run(data, stage, new TrainingTask(plan.toJson(), testSet));
        } finally {
            testSet.destroy();
        }
        List<String> lines = new ArrayList<>();
        ranks.forEach(r -> lines.addAll(r.reports()));
        TrainingSummary summary = TrainingSummary.ofReportLines(plan.aggregation().id(), workers, plan.epochs(),
                plan.batchSize(), lines, (System.nanoTime() - start) / 1e9, null, target).withModel(plan.model());
        return new SparkTrainingResult(summary, ranks.get(0).parameters());
    }

    /** One rank: its partition as a split (cut to the smallest partition's size), then a training worker's run. */
    private record TrainingTask(String planJson, Broadcast<FashionMnist.Split> test)
            implements RankFunction<Row, RankTraining> {
        private static final long serialVersionUID = 1L;

        @Override
        public RankTraining apply(RankContext rank, Iterator<Row> partition) throws Exception {
            TrainRunner.quietOfflineEngine();
            FashionMnist.Split mine = FashionMnistRows.toSplit(partition);
            int[] sizes = Arrays.stream(rank.barrier().allGather(String.valueOf(mine.size()))).mapToInt(Integer::parseInt)
                    .toArray();
            int smallest = Arrays.stream(sizes).min().orElse(0);
            if (smallest == 0) {
                throw new IllegalArgumentException("a partition holds no images (images per partition: "
                        + Arrays.toString(sizes) + "); give at least as many images as workers");
            }
            TrainPlan plan = TrainPlan.fromJson(planJson)
                    .withConfig(SwitchMLConfig.Key.RANK.property(), String.valueOf(rank.rank()))
                    .withConfig(SwitchMLConfig.Key.WORKERS.property(), String.valueOf(rank.workers()));
            WorkerConnection.PeerExchange connected = endpoint -> {
                throw new IllegalStateException("the barrier stage connected the all-reduce already");
            };
            List<String> reports = new ArrayList<>();
            TrainedParameters trained = new TrainWorker(plan, connected).train(rank.allReduce(), mine.first(smallest),
                    rank.rank() == 0 ? test.value() : null, reports::add);
            return new RankTraining(reports, rank.rank() == 0 ? trained
                    : new TrainedParameters(trained.checksum(), new byte[0]));
        }
    }
}
