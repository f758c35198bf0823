package io.switchml.examples;

import io.switchml.api.AllReduce;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.tensorflow.DistributedOptimizer;
import io.switchml.tensorflow.TensorMemory;
import io.switchml.tensorflow.VariableBroadcast;
import io.switchml.tensorflow.VariableChecksum;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.Result;
import org.tensorflow.Session;
import org.tensorflow.framework.optimizers.Adam;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.Random;

/**
 * One rank of data-parallel TensorFlow Java training through a running switch, on synthetic data:
 * {@code TensorFlowTraining CONTROLLER_HOST:PORT JOB RANK WORKERS BATCHES}. Each rank holds its own
 * number of batches (they may differ: a rank that runs out joins the others' remaining steps); it
 * prints its variables' checksum at the end, the same on every rank.
 */
public final class TensorFlowTraining {
    static final int FEATURES = 20;
    static final int CLASSES = 3;
    static final int BATCH_SIZE = 32;
    static final int EPOCHS = 2;

    private TensorFlowTraining() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: TensorFlowTraining CONTROLLER_HOST:PORT JOB RANK WORKERS BATCHES");
            System.exit(64);
        }
        int rank = Integer.parseInt(args[2]);
        long checksum = run(args[0], args[1], rank, Integer.parseInt(args[3]), Integer.parseInt(args[4]));
        System.out.println("rank " + rank + " parameters " + Long.toHexString(checksum));
    }

    /** Trains this rank's {@code batches} batches for {@link #EPOCHS} epochs; returns the variables' checksum. */
    public static long run(String controller, String job, int rank, int workers, int batches) throws Exception {
        SwitchMLConfig config = SwitchMLConfig.builder()
                .controller(controller).job(job).rank(rank).workers(workers).build();
        Random random = new Random(rank);                                     // each rank initializes differently
        try (AllReduce allReduce = SwitchMLContext.connect(config);           // this worker's rank of the job
             Graph graph = new Graph()) {
            Ops tf = Ops.create(graph);
            Placeholder<TFloat32> x = tf.placeholder(TFloat32.class, Placeholder.shape(Shape.of(-1, FEATURES)));
            Placeholder<TInt32> y = tf.placeholder(TInt32.class, Placeholder.shape(Shape.of(-1)));
            Operand<TFloat32> hidden = tf.nn.relu(tf.linalg.matMul(x, weights(tf, "w1", random, FEATURES, 64)));
            Operand<TFloat32> logits = tf.linalg.matMul(hidden, weights(tf, "w2", random, 64, CLASSES));
            Operand<TFloat32> loss = tf.math.mean(tf.nn.softmaxCrossEntropyWithLogits(logits,
                    tf.oneHot(y, tf.constant(CLASSES), tf.constant(1f), tf.constant(0f))).loss(), tf.constant(0));
            try (DistributedOptimizer optimizer = new DistributedOptimizer(allReduce, new Adam(graph, 0.01f))) {
                optimizer.minimize(loss);                                     // gradients averaged over the ranks
                try (Session session = new Session(graph);
                     TFloat32 xs = TFloat32.tensorOf(Shape.of(BATCH_SIZE, FEATURES));
                     TInt32 ys = TInt32.tensorOf(Shape.of(BATCH_SIZE))) {
                    session.initialize();
                    VariableBroadcast.fromRank(allReduce, session, 0);       // everyone starts from rank 0's variables
                    for (int epoch = 0; epoch < EPOCHS; epoch++) {
                        Random data = new Random(rank * 1000L + epoch);
                        for (int b = 0; b < batches; b++) {
                            batch(data, TensorMemory.floats(xs), TensorMemory.ints(ys));
                            optimizer.step(session, run -> run.feed(x, xs).feed(y, ys)).close();
                        }
                        optimizer.join(session);                              // ranks may hold different numbers of batches
                    }
                    return VariableChecksum.of(session);                      // the same on every rank
                }
            }
        }
    }

    private static Operand<TFloat32> weights(Ops tf, String name, Random random, int in, int out) {
        float[] w = new float[in * out];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) random.nextGaussian() * (float) Math.sqrt(2.0 / in);
        }
        return tf.withName(name).variable(tf.reshape(tf.constant(w), tf.constant(new long[] {in, out})));
    }

    /** A batch of three Gaussian blobs, one per class, written into the fed tensors' memory. */
    private static void batch(Random random, FloatBuffer x, IntBuffer y) {
        for (int i = 0; i < BATCH_SIZE; i++) {
            int label = random.nextInt(CLASSES);
            y.put(i, label);
            for (int f = 0; f < FEATURES; f++) {
                x.put(i * FEATURES + f, (float) random.nextGaussian() + (f % CLASSES == label ? 2f : 0f));
            }
        }
    }
}
