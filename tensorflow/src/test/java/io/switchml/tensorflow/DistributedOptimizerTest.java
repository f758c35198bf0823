package io.switchml.tensorflow;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.api.StepCountMismatchException;
import io.switchml.launch.InProcessSwitchJob;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.Result;
import org.tensorflow.Session;
import org.tensorflow.framework.optimizers.Adam;
import org.tensorflow.framework.optimizers.GradientDescent;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.op.core.Variable;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** Workers of one job in this JVM, each with its own TensorFlow graph, aggregating through an embedded switch. */
class DistributedOptimizerTest {
    private static final int WORKERS = 3;
    private static final int FEATURES = 20;
    private static final int CLASSES = 4;
    private static InProcessSwitchJob workers;
    private static final org.tensorflow.proto.ConfigProto ONE_THREAD = org.tensorflow.proto.ConfigProto.newBuilder()
            .setIntraOpParallelismThreads(1).setInterOpParallelismThreads(1).build();

    @BeforeAll
    static void start() {
        workers = new InProcessSwitchJob(WORKERS);
    }

    @AfterAll
    static void stop() {
        workers.close();
    }

    /** A softmax classifier with one hidden layer, its variables initialized from {@code seed}. */
    private record Model(Graph graph, Placeholder<TFloat32> x, Placeholder<TInt32> y, Operand<TFloat32> loss) {
        static Model build(long seed, int hidden) {
            Graph g = new Graph();
            Ops tf = Ops.create(g);
            Placeholder<TFloat32> x = tf.placeholder(TFloat32.class, Placeholder.shape(Shape.of(-1, FEATURES)));
            Placeholder<TInt32> y = tf.placeholder(TInt32.class, Placeholder.shape(Shape.of(-1)));
            Random random = new Random(seed);
            Operand<TFloat32> w1 = variable(tf, "w1", random, FEATURES, hidden);
            Operand<TFloat32> b1 = variable(tf, "b1", random, hidden);
            Operand<TFloat32> w2 = variable(tf, "w2", random, hidden, CLASSES);
            Operand<TFloat32> h = tf.nn.relu(tf.math.add(tf.linalg.matMul(x, w1), b1));
            Operand<TFloat32> logits = tf.linalg.matMul(h, w2);
            Operand<TFloat32> loss = tf.math.mean(tf.nn.softmaxCrossEntropyWithLogits(logits, tf.oneHot(y, tf.constant(CLASSES), tf.constant(1f), tf.constant(0f))).loss(), tf.constant(0));
            return new Model(g, x, y, loss);
        }

        private static Variable<TFloat32> variable(Ops tf, String name, Random random, long... shape) {
            float[] values = new float[(int) Shape.of(shape).size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = (float) random.nextGaussian() * 0.3f;
            }
            return tf.withName(name).variable(tf.reshape(tf.constant(values), tf.constant(shape)));
        }
    }

    /** Rank {@code rank}'s batch {@code step}: random points, labelled by which of 4 fixed directions they lean to. */
    private static void feedBatch(Session.Runner runner, Model m, int rank, int step, List<AutoCloseable> open) {
        Random random = new Random(1000L * rank + step);
        int n = 16;
        float[] xs = new float[n * FEATURES];
        int[] ys = new int[n];
        for (int i = 0; i < n; i++) {
            for (int f = 0; f < FEATURES; f++) {
                xs[i * FEATURES + f] = (float) random.nextGaussian();
            }
            ys[i] = (xs[i * FEATURES] > 0 ? 1 : 0) + (xs[i * FEATURES + 1] > 0 ? 2 : 0);
        }
        TFloat32 x = TFloat32.tensorOf(Shape.of(n, FEATURES));
        TensorMemory.floats(x).put(xs);
        TInt32 y = TInt32.tensorOf(Shape.of(n));
        TensorMemory.ints(y).put(ys);
        open.add(x);
        open.add(y);
        runner.feed(m.x(), x).feed(m.y(), y);
    }

    private static float train(DistributedOptimizer opt, Session s, Model m, int rank, int step) throws Exception {
        List<AutoCloseable> open = new ArrayList<>();
        try (Result r = opt.step(s, runner -> feedBatch(runner, m, rank, step, open), m.loss())) {
            return ((TFloat32) r.get(0)).getFloat();
        } finally {
            for (AutoCloseable c : open) {
                c.close();
            }
        }
    }

    @Test
    void variablesStartFromRankZerosAndStayBitIdenticalWhileTheLossFalls() throws Exception {
        List<long[]> results = workers.run(ctx -> {
            Model m = Model.build(42 + ctx.rank(), 32); // different initial variables on purpose
            try (Graph g = m.graph();
                 DistributedOptimizer opt = new DistributedOptimizer(ctx, new Adam(g, 0.01f), 1024)) {
                opt.minimize(m.loss());
                try (Session s = new Session(g, ONE_THREAD)) {
                    s.initialize();
                    VariableBroadcast.fromRank(ctx, s, 0);
                    long start = VariableChecksum.of(s);
                    float first = train(opt, s, m, ctx.rank(), 0);
                    float last = first;
                    for (int step = 1; step < 60; step++) {
                        last = train(opt, s, m, ctx.rank(), step);
                    }
                    opt.finish();
                    assertThat(opt.steps()).isEqualTo(60);
                    assertThat(opt.bytesPerStep()).isEqualTo((FEATURES * 32 + 32 + 32 * CLASSES) * 4L);
                    return new long[] {start, VariableChecksum.of(s), opt.checksum(s), Float.floatToIntBits(first),
                            Float.floatToIntBits(last)};
                }
            }
        });
        for (long[] r : results) {
            assertThat(r[0]).isEqualTo(results.get(0)[0]);
            assertThat(r[1]).as("every variable, Adam's moments too").isEqualTo(results.get(0)[1]);
            assertThat(r[2]).isEqualTo(results.get(0)[2]);
            assertThat(Float.intBitsToFloat((int) r[4])).isLessThan(Float.intBitsToFloat((int) r[3]) * 0.7f);
        }
    }

    @Test
    void theUpdateAppliesTheSwitchsMeanOfTheGradients() throws Exception {
        // loss = sum(w * c_rank): the gradient is c_rank, so one SGD step of rate 1 moves w by minus their mean.
        int n = 300;
        List<float[][]> perRank = workers.run(ctx -> {
            float[] c = new float[n];
            Random random = new Random(ctx.rank());
            for (int i = 0; i < n; i++) {
                c[i] = (float) random.nextGaussian() * (ctx.rank() + 1);
            }
            try (Graph g = new Graph()) {
                Ops tf = Ops.create(g);
                Variable<TFloat32> w = tf.withName("w").variable(tf.zeros(tf.constant(new long[] {n}), TFloat32.class));
                Operand<TFloat32> loss = tf.reduceSum(tf.math.mul(w, tf.constant(c)), tf.constant(0));
                try (DistributedOptimizer opt = new DistributedOptimizer(ctx, new GradientDescent(g, 1f), 512)) {
                    opt.minimize(loss);
                    try (Session s = new Session(g, ONE_THREAD)) {
                        s.initialize();
                        opt.step(s, runner -> { }).close();
                        try (TFloat32 after = (TFloat32) s.runner().fetch(w).run().get(0)) {
                            float[] moved = new float[n];
                            FloatBuffer values = TensorMemory.floats(after);
                            for (int i = 0; i < n; i++) {
                                moved[i] = -values.get(i);
                            }
                            return new float[][] {c, moved};
                        }
                    }
                }
            }
        });
        float[] expected = ReferenceAllReduce.floats(perRank.stream().map(p -> p[0]).toArray(float[][]::new),
                workers.elementsPerPacket(), ReduceOp.MEAN);
        for (float[][] p : perRank) {
            assertThat(p[1]).isEqualTo(expected);
        }
    }

    @Test
    void aRankThatRunsOutJoinsTheOthersStepsAndAllEndIdentical() throws Exception {
        List<Long> checksums = workers.run(ctx -> {
            Model m = Model.build(7, 8);
            try (Graph g = m.graph(); DistributedOptimizer opt = new DistributedOptimizer(ctx, new Adam(g, 0.01f))) {
                opt.minimize(m.loss());
                try (Session s = new Session(g, ONE_THREAD)) {
                    s.initialize();
                    int steps = 3 + ctx.rank(); // rank 0 has 3 batches, rank 2 has 5
                    for (int step = 0; step < steps; step++) {
                        train(opt, s, m, ctx.rank(), step);
                    }
                    long shadowed = opt.join(s);
                    assertThat(shadowed).isEqualTo(2 - ctx.rank());
                    return VariableChecksum.of(s);
                }
            }
        });
        assertThat(checksums).containsOnly(checksums.get(0));
    }

    @Test
    void unevenStepsWithoutJoiningFailOnEveryRank() throws Exception {
        // The ranks end out of step: a job of their own.
        try (InProcessSwitchJob uneven = new InProcessSwitchJob(WORKERS)) {
            unevenStepsFail(uneven);
        }
    }

    private static void unevenStepsFail(InProcessSwitchJob uneven) throws Exception {
        List<String> outcomes = uneven.run(ctx -> {
            Model m = Model.build(7, 8);
            try (Graph g = m.graph(); DistributedOptimizer opt = new DistributedOptimizer(ctx, new Adam(g, 0.01f))) {
                opt.minimize(m.loss());
                try (Session s = new Session(g, ONE_THREAD)) {
                    s.initialize();
                    try {
                        for (int step = 0; step < (ctx.rank() == 0 ? 2 : 3); step++) {
                            train(opt, s, m, ctx.rank(), step);
                        }
                        opt.finish();
                        return "finished";
                    } catch (StepCountMismatchException e) {
                        return e.getClass().getSimpleName();
                    }
                }
            }
        });
        assertThat(outcomes).containsOnly("StepCountMismatchException");
    }

    @Test
    void differentModelsFailWithBothLayoutsInTheMessage() throws Exception {
        // Rank 1 fails at the check while rank 0 goes on and waits for it: a job of their own, with a short timeout.
        try (InProcessSwitchJob mismatched = new InProcessSwitchJob(2, java.time.Duration.ofSeconds(2))) {
            List<String> outcomes = mismatched.run(ctx -> {
                Model m = Model.build(1, ctx.rank() == 1 ? 16 : 8);
                try (Graph g = m.graph(); Session s = new Session(g, ONE_THREAD)) {
                    s.initialize();
                    VariableBroadcast.fromRank(ctx, s, 0);
                    return "broadcast";
                } catch (RuntimeException e) {
                    return e.getMessage();
                }
            });
            assertThat(outcomes.get(1)).contains("rank 1's variables differ from rank 0's", "w1 (20, 16)", "w1 (20, 8)");
        }
    }
}
