package io.switchml.training;

import io.switchml.api.AllReduce;
import io.switchml.tensorflow.DistributedOptimizer;
import io.switchml.tensorflow.GraphVariables;
import io.switchml.tensorflow.TensorMemory;
import io.switchml.tensorflow.VariableBroadcast;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.Result;
import org.tensorflow.Session;
import org.tensorflow.TensorFlow;
import org.tensorflow.framework.optimizers.Adam;
import org.tensorflow.framework.optimizers.Momentum;
import org.tensorflow.framework.optimizers.Optimizer;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Op;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.op.core.Variable;
import org.tensorflow.proto.ConfigProto;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

/**
 * {@link TrainWorker}'s job with TensorFlow Java: the same perceptron as {@link Classifier}
 * (784-256-128-10, ReLU, weights drawn as DJL's default draws them: normal with standard deviation
 * sqrt(2 / inputs); zero biases), softmax cross-entropy over the batch
 * mean, the plan's optimizer, batches drawn at random each epoch with the short last one dropped,
 * gradients averaged by a {@link DistributedOptimizer} and rank 0's initial variables broadcast
 * ({@link VariableBroadcast}). One CPU thread per worker, as the DJL path runs PyTorch.
 */
final class TensorFlowWorker {
    /** TensorFlow's own threads, one per worker process (as PyTorch's num_threads=1 on the DJL path). */
    private static final ConfigProto ONE_THREAD = ConfigProto.newBuilder().setIntraOpParallelismThreads(1)
            .setInterOpParallelismThreads(1).build();

    private final TrainPlan plan;

    TensorFlowWorker(TrainPlan plan) {
        this.plan = plan;
    }

    /** "TensorFlow 2.18.0": loads the native library, so a broken install fails here. */
    static String engine() {
        return "TensorFlow " + TensorFlow.version();
    }

    /** The graph of one training worker. */
    private record Model(Graph graph, Placeholder<TFloat32> images, Placeholder<TInt32> labels, Operand<TFloat32> loss,
                         Operand<TInt64> correct) {
    }

    /** One training step on the batch in {@code x} and {@code y}: its result holds the loss and the correct count. */
    private interface Step {
        Result run(TFloat32 x, TInt32 y);
    }

    TrainedParameters train(AllReduce allReduce, int rank, FashionMnist.Split shard, FashionMnist.Split test,
                            Consumer<String> reports) {
        // Each rank initializes differently on purpose: the broadcast must make them equal.
        try (Graph graph = new Graph()) {
            Model model = build(graph, new Random(plan.seed() + rank));
            Optimizer optimizer = optimizer(graph);
            try (DistributedOptimizer distributed = allReduce == null ? null
                    : new DistributedOptimizer(allReduce, optimizer, plan.bucketBytes())) {
                Op update = distributed == null ? optimizer.minimize(model.loss()) : distributed.minimize(model.loss());
                try (Session session = new Session(graph, ONE_THREAD);
                     TFloat32 x = TFloat32.tensorOf(Shape.of(plan.batchSize(), FashionMnist.PIXELS));
                     TInt32 y = TInt32.tensorOf(Shape.of(plan.batchSize()))) {
                    session.initialize();
                    if (allReduce != null) {
                        VariableBroadcast.fromRank(allReduce, session, 0, plan.bucketBytes());
                    }
                    Step step = distributed == null
                            ? (xs, ys) -> session.runner().feed(model.images(), xs).feed(model.labels(), ys)
                            .fetch(model.loss()).fetch(model.correct()).addTarget(update).run()
                            : (xs, ys) -> distributed.step(session, run -> run.feed(model.images(), xs).feed(model.labels(), ys),
                            model.loss(), model.correct());
                    float[] pixels = shard.scaledPixels();
                    float[] testPixels = test == null ? null : test.scaledPixels();
                    Random shuffle = new Random(plan.seed() * 31 + rank);
                    double testAccuracy = Double.NaN;
                    for (int epoch = 1; epoch <= plan.epochs(); epoch++) {
                        long aggregationBefore = distributed == null ? 0 : distributed.aggregationNanos();
                        EpochReport trained = epoch(rank, epoch, pixels, shard.labels(), shuffle, step, x, y);
                        if (distributed != null) {
                            distributed.finish(); // every rank ends the epoch at the same step
                        }
                        long aggregation = distributed == null ? 0 : distributed.aggregationNanos() - aggregationBefore;
                        testAccuracy = test == null ? Double.NaN : accuracy(session, model, testPixels, test.labels());
                        reports.accept(new EpochReport(rank, epoch, trained.steps(), trained.images(), trained.loss(),
                                trained.accuracy(), trained.seconds(), aggregation / 1e9, testAccuracy).toLine());
                        if (allReduce != null) {
                            // Rank 0 alone evaluates the test set: the next epoch's timed steps (and leaving,
                            // after the last) wait for it here, or the other ranks' first all-reduce would count
                            // its evaluation as their step time.
                            allReduce.barrier();
                        }
                    }
                    TrainedParameters trained = parameters(session, GraphVariables.all(graph));
                    reports.accept(new FinalReport(rank, trained.checksum(), testAccuracy).toLine());
                    return trained;
                }
            }
        }
    }

    /**
     * One pass over the shard ({@code pixels} scaled, {@code labels}) in a random order, the short last batch dropped, each batch written straight into the
     * fed tensors' memory; the report has no aggregation time or test accuracy yet.
     */
    private EpochReport epoch(int rank, int epoch, float[] pixels, float[] labels, Random shuffle, Step step, TFloat32 x,
                              TInt32 y) {
        int[] order = FashionMnist.permutation(labels.length, shuffle);
        FloatBuffer xs = TensorMemory.floats(x);
        IntBuffer ys = TensorMemory.ints(y);
        int steps = labels.length / plan.batchSize();
        double lossSum = 0;
        long correct = 0;
        long stepNanos = 0;
        for (int s = 0; s < steps; s++) {
            for (int i = 0; i < plan.batchSize(); i++) {
                int image = order[s * plan.batchSize() + i];
                xs.put(i * FashionMnist.PIXELS, pixels, image * FashionMnist.PIXELS, FashionMnist.PIXELS);
                ys.put(i, (int) labels[image]);
            }
            long start = System.nanoTime();
            try (Result r = step.run(x, y)) {
                lossSum += ((TFloat32) r.get(0)).getFloat();
                correct += ((TInt64) r.get(1)).getLong();
            }
            stepNanos += System.nanoTime() - start;
        }
        long images = (long) steps * plan.batchSize();
        return new EpochReport(rank, epoch, steps, images, steps == 0 ? Double.NaN : lossSum / steps,
                images == 0 ? Double.NaN : (double) correct / images, stepNanos / 1e9, 0, Double.NaN);
    }

    private Model build(Graph graph, Random random) {
        Ops tf = Ops.create(graph);
        Placeholder<TFloat32> images = tf.placeholder(TFloat32.class, Placeholder.shape(Shape.of(-1, FashionMnist.PIXELS)));
        Placeholder<TInt32> labels = tf.placeholder(TInt32.class, Placeholder.shape(Shape.of(-1)));
        Operand<TFloat32> h1 = tf.nn.relu(dense(tf, "dense1", images, FashionMnist.PIXELS, 256, random));
        Operand<TFloat32> h2 = tf.nn.relu(dense(tf, "dense2", h1, 256, 128, random));
        Operand<TFloat32> logits = dense(tf, "dense3", h2, 128, FashionMnist.CLASSES, random);
        Operand<TFloat32> oneHot = tf.oneHot(labels, tf.constant(FashionMnist.CLASSES), tf.constant(1f), tf.constant(0f));
        Operand<TFloat32> loss = tf.math.mean(tf.nn.softmaxCrossEntropyWithLogits(logits, oneHot).loss(), tf.constant(0));
        Operand<TInt64> correct = tf.reduceSum(tf.dtypes.cast(tf.math.equal(tf.math.argMax(logits, tf.constant(1)),
                tf.dtypes.cast(labels, TInt64.class)), TInt64.class), tf.constant(0));
        return new Model(graph, images, labels, loss, correct);
    }

    /** {@code input x weight + bias}, the weight from {@code random} as DJL initializes a Linear's (He), the bias zero. */
    private static Operand<TFloat32> dense(Ops tf, String name, Operand<TFloat32> input, int in, int out, Random random) {
        double deviation = Math.sqrt(2.0 / in);
        float[] w = new float[in * out];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) (random.nextGaussian() * deviation);
        }
        Variable<TFloat32> weight = tf.withName(name + "_weight").variable(tf.reshape(tf.constant(w), tf.constant(new long[] {in, out})));
        Variable<TFloat32> bias = tf.withName(name + "_bias").variable(tf.zeros(tf.constant(new long[] {out}), TFloat32.class));
        return tf.math.add(tf.linalg.matMul(input, weight), bias);
    }

    /** TensorFlow's optimizer for the plan's: Adam (its default betas and epsilon, as DJL's), or momentum SGD at a fixed rate. */
    private Optimizer optimizer(Graph graph) {
        requireSupported(plan);
        TrainOptimizer o = plan.optimizer();
        return switch (o.kind()) {
            case ADAM -> new Adam(graph, plan.learningRate());
            case SGD -> new Momentum(graph, plan.learningRate(), o.correctsMomentumIn(plan.aggregation()) ? 0f : o.momentum());
        };
    }

    /** Fails, before any worker starts, on what this path cannot train: a learning-rate schedule. */
    static void requireSupported(TrainPlan plan) {
        if (plan.optimizer().schedule() != TrainOptimizer.Schedule.FIXED) {
            throw new IllegalArgumentException("--framework tensorflow trains at a fixed learning rate (TensorFlow Java's"
                    + " optimizers take a constant one); give --lr-schedule fixed instead of " + plan.optimizer().schedule().id());
        }
    }

    private static double accuracy(Session session, Model model, float[] pixels, float[] labels) {
        long correct = 0;
        for (int from = 0; from < labels.length; from += TrainWorker.EVALUATION_BATCH) {
            int k = Math.min(TrainWorker.EVALUATION_BATCH, labels.length - from);
            try (TFloat32 x = TFloat32.tensorOf(Shape.of(k, FashionMnist.PIXELS));
                 TInt32 y = TInt32.tensorOf(Shape.of(k))) {
                TensorMemory.floats(x).put(0, pixels, from * FashionMnist.PIXELS, k * FashionMnist.PIXELS);
                for (int i = 0; i < k; i++) {
                    TensorMemory.ints(y).put(i, (int) labels[from + i]);
                }
                try (Result r = session.runner().feed(model.images(), x).feed(model.labels(), y).fetch(model.correct()).run()) {
                    correct += ((TInt64) r.get(0)).getLong();
                }
            }
        }
        return (double) correct / labels.length;
    }

    /**
     * Every variable's values (the optimizer's too) in graph order, and their checksum: equal on ranks whose variables
     * are bit-identical.
     */
    private static TrainedParameters parameters(Session session, List<Output<?>> variables) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (Output<?> v : variables) {
            try (Result r = session.runner().fetch(v).run()) {
                ByteBuffer memory = TensorMemory.bytes(r.get(0));
                byte[] copy = new byte[memory.remaining()];
                memory.get(copy);
                bytes.writeBytes(copy);
            }
        }
        return new TrainedParameters(GraphVariables.checksum(session, variables), bytes.toByteArray());
    }
}
