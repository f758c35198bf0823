package io.switchml.training;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.Batch;
import ai.djl.training.loss.Loss;
import ai.djl.translate.TranslateException;
import io.switchml.agent.HostAggregation;
import io.switchml.api.AllReduce;
import io.switchml.client.SwitchMLConfig;
import io.switchml.djl.GradientSynchronizer;
import io.switchml.djl.ParameterBroadcast;
import io.switchml.launch.WorkerConnection;

import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One data-parallel training worker: its shard of Fashion-MNIST, the {@link Classifier}, one
 * {@link BatchStep} per batch with a {@link GradientSynchronizer} as training listener (gradients
 * averaged over the workers before every {@code trainer.step()}, which applies them with the
 * plan's {@link TrainOptimizer}), rank 0's initial parameters
 * broadcast to all. {@link #main} is the entry point of the processes the {@link TrainRunner}
 * starts; it prints an {@link EpochReport} line per epoch and a {@link FinalReport} at the end.
 */
public final class TrainWorker {
    /**
     * Test images per evaluation batch: small enough that a batch's activations stay under glibc's 32 MiB ceiling for
     * heap allocations, so they are reused from batch to batch. At 1 000 images the CNN's first layer alone is 100 MB,
     * mapped afresh for every batch and zeroed by the kernel (40 % of the machine's samples in {@code clear_page}), which
     * made rank 0's evaluation take longer than the others' operation timeout in the barrier after it.
     */
    static final int EVALUATION_BATCH = 100;

    private final TrainPlan plan;
    private final WorkerConnection.PeerExchange peers;
    /** The plan's worker settings, through their one parser (training reads rank and workers). */
    private final SwitchMLConfig settings;

    public TrainWorker(TrainPlan plan, WorkerConnection.PeerExchange peers) {
        this.plan = plan;
        this.peers = peers;
        this.settings = SwitchMLConfig.builder().settings(plan.config()).build();
    }

    public static void main(String[] args) {
        try {
            new TrainWorker(TrainPlan.fromArguments(args), WorkerConnection.PeerExchange.STANDARD_STREAMS).run(line -> {
                System.out.println(line);
                System.out.flush();
            });
            System.exit(0);
        } catch (RuntimeException | IOException | TranslateException e) {
            System.err.println("training worker failed: " + e);
            System.exit(1);
        }
    }

    /** Trains on this rank's shard of the IDX files in the plan's data directory; {@code reports} receives the report lines. */
    public void run(Consumer<String> reports) throws IOException, TranslateException {
        train(shard(), testSet(), reports);
    }

    /**
     * Trains as one rank of a job whose ranks run on several hosts, then hands every rank's reports to all through
     * the job's own broadcast (each rank's in turn), so that rank 0 can tell what a run on one host tells.
     *
     * @param reports   receives this rank's report lines as they come
     * @param target    the test accuracy whose time the summary reports
     * @return at rank 0, the run's summary from every rank's reports; null at the other ranks
     */
    public TrainingSummary runGathered(Consumer<String> reports, double target) throws IOException, TranslateException {
        long start = System.nanoTime();
        int rank = settings.rank();
        int workers = settings.workers();
        StringBuilder mine = new StringBuilder();
        try (WorkerConnection connection = HostAggregation.open(plan.aggregation().algorithm(), plan.config(),
                plan.effectiveCompression(), peers)) {
            train(connection.allReduce(), shard(), testSet(), line -> {
                mine.append(line).append('\n');
                reports.accept(line);
            });
            byte[] mineBytes = mine.toString().getBytes(StandardCharsets.UTF_8);
            List<String> lines = new ArrayList<>();
            for (int root = 0; root < workers; root++) {
                byte[] theirs = connection.allReduce().broadcast(root == rank ? mineBytes : new byte[0], root);
                lines.addAll(new String(theirs, StandardCharsets.UTF_8).lines().toList());
            }
            if (rank != 0) {
                return null;
            }
            return TrainingSummary.ofReportLines(plan.aggregation().id(), workers, plan.epochs(), plan.batchSize(), lines,
                    (System.nanoTime() - start) / 1e9, null, target).withModel(plan.model());
        }
    }

    /** This rank's shard of the training images (every rank holds as many). */
    private FashionMnist.Split shard() throws IOException {
        FashionMnist.Split all = FashionMnist.train(plan.data());
        return (plan.trainLimit() > 0 ? all.first(plan.trainLimit()) : all).shard(settings.rank(), settings.workers(),
                plan.seed());
    }

    /** The test images at rank 0, which measures test accuracy; null elsewhere. */
    private FashionMnist.Split testSet() throws IOException {
        return settings.rank() == 0 ? FashionMnist.test(plan.data()) : null;
    }

    /**
     * Trains on {@code shard}, this rank's images (every rank must hold as many, so all run the same number of
     * steps); rank 0 measures test accuracy on {@code test} after each epoch (null: not measured).
     * {@code reports} receives the report lines.
     *
     * @return the trained parameters, identical on every rank
     */
    public TrainedParameters train(FashionMnist.Split shard, FashionMnist.Split test, Consumer<String> reports)
            throws IOException, TranslateException {
        try (WorkerConnection connection = plan.aggregation().isNone() ? null
                : HostAggregation.open(plan.aggregation().algorithm(), plan.config(), plan.effectiveCompression(), peers)) {
            return train(connection == null ? null : connection.allReduce(), shard, test, reports);
        }
    }

    /**
     * The same over an all-reduce already connected (the plan's aggregation; null for {@code none}), which stays
     * open.
     */
    public TrainedParameters train(AllReduce allReduce, FashionMnist.Split shard, FashionMnist.Split test,
                                   Consumer<String> reports) throws IOException, TranslateException {
        int rank = settings.rank();
        int workers = settings.workers();
        if (plan.aggregation().isNone() && workers != 1) {
            throw new IllegalArgumentException("aggregation none trains one process alone; got " + workers + " workers");
        }
        if ((allReduce == null) != (plan.aggregation().isNone())) {
            throw new IllegalArgumentException("aggregation " + plan.aggregation() + (allReduce == null
                    ? " needs an all-reduce" : " trains alone, without an all-reduce"));
        }
        if (plan.framework() == Framework.TENSORFLOW) {
            return new TensorFlowWorker(plan).train(allReduce, rank, shard, test, reports);
        }
        float[] testPixels = test == null ? null : test.scaledPixels();
        // Each rank initializes differently on purpose: the broadcast must make them equal.
        Engine.getInstance().setRandomSeed((int) plan.seed() + rank);
        try (Model model = Model.newInstance("fashion-mnist-" + plan.model().id())) {
            model.setBlock(plan.model().block());
            EpochMeter meter = new EpochMeter();
            // The steps of the run (the sampler drops a short last batch), which a learning-rate schedule spans.
            int runSteps = Math.max(1, plan.epochs() * (shard.size() / plan.batchSize()));
            GradientSynchronizer sync = allReduce == null ? null : new GradientSynchronizer(allReduce, plan.bucketBytes());
            DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(plan.optimizer().build(plan.learningRate(), plan.aggregation(), runSteps))
                    .addTrainingListeners(meter);
            if (sync != null) {
                config.addTrainingListeners(sync);
            }
            try (Trainer trainer = model.newTrainer(config)) {
                trainer.initialize(new Shape(1, FashionMnist.PIXELS));
                if (allReduce != null) {
                    ParameterBroadcast.fromRank(allReduce, model.getBlock(), 0, plan.bucketBytes());
                }
                NDManager manager = trainer.getManager();
                ArrayDataset dataset = new ArrayDataset.Builder()
                        .setData(manager.create(shard.scaledPixels(), new Shape(shard.size(), FashionMnist.PIXELS)))
                        .optLabels(manager.create(shard.labels()))
                        .setSampling(plan.batchSize(), true, true)
                        .build();
                double testAccuracy = Double.NaN;
                for (int epoch = 1; epoch <= plan.epochs(); epoch++) {
                    meter.reset();
                    long steps = 0;
                    long stepNanos = 0;
                    long aggregationBefore = sync == null ? 0 : sync.aggregationNanos();
                    for (Batch batch : trainer.iterateDataset(dataset)) {
                        long start = System.nanoTime();
                        BatchStep.train(trainer, batch);
                        trainer.step();
                        stepNanos += System.nanoTime() - start;
                        steps++;
                        batch.close();
                    }
                    long aggregation = sync == null ? 0 : sync.aggregationNanos() - aggregationBefore;
                    testAccuracy = test == null ? Double.NaN : accuracy(trainer, testPixels, test.labels());
                    reports.accept(new EpochReport(rank, epoch, steps, meter.images(), meter.meanLoss(), meter.accuracy(),
                            stepNanos / 1e9, aggregation / 1e9, testAccuracy).toLine());
                    if (allReduce != null) {
                        // Rank 0 alone evaluates the test set: the next epoch's timed steps (and leaving, after the last) wait
                        // for it here, or the other ranks' first all-reduce would count its evaluation as their step time.
                        allReduce.barrier();
                    }
                }
                TrainedParameters trained = TrainedParameters.of(model.getBlock());
                reports.accept(new FinalReport(rank, trained.checksum(), testAccuracy).toLine());
                return trained;
            }
        }
    }

    /** Accuracy of the model on images {@code pixels} (scaled) with {@code labels}, in batches. */
    static double accuracy(Trainer trainer, float[] pixels, float[] labels) {
        long correct = 0;
        try (NDManager manager = trainer.getManager().newSubManager()) {
            for (int from = 0; from < labels.length; from += EVALUATION_BATCH) {
                int k = Math.min(EVALUATION_BATCH, labels.length - from);
                NDArray x = manager.create(FloatBuffer.wrap(pixels, from * FashionMnist.PIXELS, k * FashionMnist.PIXELS),
                        new Shape(k, FashionMnist.PIXELS));
                NDArray predicted = trainer.evaluate(new NDList(x)).singletonOrThrow().argMax(1).toType(DataType.FLOAT32, false);
                correct += predicted.eq(manager.create(FloatBuffer.wrap(labels, from, k), new Shape(k))).countNonzero().getLong();
            }
        }
        return (double) correct / labels.length;
    }
}
