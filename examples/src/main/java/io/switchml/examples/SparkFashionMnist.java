package io.switchml.examples;

import io.switchml.api.ReduceOp;
import io.switchml.spark.BarrierAllReduce;
import io.switchml.spark.BarrierOptions;
import io.switchml.spark.FashionMnistRows;
import io.switchml.spark.SparkTraining;
import io.switchml.spark.SparkTrainingResult;
import io.switchml.training.Aggregation;
import io.switchml.training.FashionMnist;
import io.switchml.training.TrainPlan;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Data-parallel training on a Spark cluster, as an application submitted with {@code spark-submit} writes it:
 * {@code SparkFashionMnist WORKERS [LIMIT]} trains the Fashion-MNIST classifier for one epoch as WORKERS barrier
 * tasks through a switch embedded in the driver, and prints the outcome. {@link #partitionSums} is the plain API:
 * any function per rank with the stage's all-reduce connected.
 */
public final class SparkFashionMnist {
    private SparkFashionMnist() {
    }

    public static void main(String[] args) {
        SparkSession spark = SparkSession.builder().appName("switchml-fashion-mnist").getOrCreate(); // master: spark-submit's
        try {
            SparkTrainingResult result = train(spark, FashionMnist.DEFAULT_DIRECTORY, Integer.parseInt(args[0]),
                    args.length > 1 ? Integer.parseInt(args[1]) : 0);
            System.out.println(result.summary().toJson());
        } finally {
            spark.stop();
        }
    }

    /** One epoch on the first {@code limit} training images (0: all) as {@code workers} barrier tasks. */
    public static SparkTrainingResult train(SparkSession spark, Path data, int workers, int limit) {
        FashionMnist.Split images = FashionMnist.train(data);
        // README:spark:begin
        Dataset<Row> rows = FashionMnistRows.of(spark, limit > 0 ? images.first(limit) : images); // label, pixels
        TrainPlan plan = new TrainPlan(Map.of(), Aggregation.switchMl(), 1, 64, 0.001f, 1, data, 0, 8 << 20);
        SparkTrainingResult result = SparkTraining.train(rows, FashionMnist.test(data), plan, workers,
                BarrierOptions.defaults(), 0.82);                   // a switch embedded in the driver, on loopback
        System.out.printf("test accuracy %.3f, parameters identical on every rank: %b%n",
                result.summary().testAccuracy(), result.summary().parametersIdentical());
        byte[] trained = result.parameters().parameters();          // rank 0's, DJL's format (Block.loadParameters)
        // README:spark:end
        System.out.println(trained.length + " bytes of parameters");
        return result;
    }

    /** Every rank sums its partition, then all-reduces: each rank returns the sum over all partitions. */
    public static List<Long> partitionSums(JavaRDD<Integer> numbers, BarrierOptions options) {
        // README:barrier:begin
        List<Long> totals = BarrierAllReduce.run(numbers, options, (rank, partition) -> {
            int[] sum = {0};                                         // rank = partition id, workers = partitions
            partition.forEachRemaining(n -> sum[0] += n);
            rank.allReduce().allReduce(sum, ReduceOp.SUM);           // the stage's all-reduce, already connected
            return (long) sum[0];
        });                                                          // one value per rank, in rank order
        // README:barrier:end
        return totals;
    }
}
