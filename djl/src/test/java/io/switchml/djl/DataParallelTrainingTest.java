package io.switchml.djl;

import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.training.Trainer;
import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.launch.InProcessSwitchJob;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** Workers of one job in this JVM, aggregating through an embedded switch. */
class DataParallelTrainingTest {
    private static final int WORKERS = 3;
    private static InProcessSwitchJob workers;

    @BeforeAll
    static void start() {
        workers = new InProcessSwitchJob(WORKERS);
    }

    @AfterAll
    static void stop() {
        workers.close();
    }

    @Test
    void gradientsBecomeTheirMeanOverWorkers() throws Exception {
        // Known gradients: each rank's own random values; expected: the switch's exact mean of them.
        List<float[][]> perRank = workers.run(ctx -> {
            try (Model model = Model.newInstance("known"); Trainer trainer = Models.mlp(model, 40, 7)) {
                GradientLayout layout = GradientLayout.trainable(model.getBlock());
                Models.backward(trainer, Models.batch(trainer.getManager(), ctx.rank(), 0, 8));
                float[] mine = new float[(int) layout.totalElements()];
                Random random = new Random(ctx.rank());
                for (int i = 0; i < mine.length; i++) {
                    mine[i] = (float) random.nextGaussian() * (ctx.rank() + 1);
                }
                for (GradientLayout.Entry e : layout.entries()) {
                    try (NDArray g = e.parameter().getArray().getGradient()) {
                        g.set(java.util.Arrays.copyOfRange(mine, (int) e.offset(), (int) e.offset() + e.elements()));
                    }
                }
                GradientSynchronizer sync = new GradientSynchronizer(ctx, 1 << 20);
                sync.synchronize(model.getBlock());
                float[] after = new float[mine.length];
                for (GradientLayout.Entry e : layout.entries()) {
                    try (NDArray g = e.parameter().getArray().getGradient()) {
                        System.arraycopy(g.toFloatArray(), 0, after, (int) e.offset(), e.elements());
                    }
                }
                assertThat(sync.steps()).isEqualTo(1);
                assertThat(sync.bytesPerStep()).isEqualTo(layout.totalBytes());
                return new float[][]{mine, after};
            }
        });
        float[][] inputs = perRank.stream().map(p -> p[0]).toArray(float[][]::new);
        float[] expected = ReferenceAllReduce.floats(inputs, workers.elementsPerPacket(), ReduceOp.MEAN);
        for (float[][] p : perRank) {
            assertThat(p[1]).isEqualTo(expected);
        }
        // the mean, to within the switch's fixed-point rounding
        for (int i = 0; i < expected.length; i += 97) {
            double mean = 0;
            for (float[] in : inputs) {
                mean += in[i] / WORKERS;
            }
            assertThat((double) expected[i]).isCloseTo(mean, org.assertj.core.data.Offset.offset(1e-5 * (1 + Math.abs(mean))));
        }
    }

    @Test
    void parametersStayBitIdenticalAndTheLossFalls() throws Exception {
        int steps = 25;
        // Each worker starts from its own random initialization (seed = rank) and trains on its own data.
        List<long[]> checksums = new ArrayList<>();
        List<float[]> losses = new ArrayList<>();
        workers.run(ctx -> {
            try (Model model = Model.newInstance("train"); Trainer trainer = Models.mlp(model, 32, 100 + ctx.rank())) {
                long[] sums = new long[steps + 1];
                float[] loss = new float[steps];
                ParameterBroadcast.fromRank(ctx, model.getBlock(), 0);
                sums[0] = ParameterChecksum.of(model.getBlock());
                GradientSynchronizer sync = new GradientSynchronizer(ctx, 2048); // several buckets, pipelined
                for (int s = 0; s < steps; s++) {
                    NDList batch = Models.batch(trainer.getManager(), ctx.rank(), s, 32);
                    loss[s] = Models.backward(trainer, batch);
                    sync.synchronize(model.getBlock());
                    trainer.step();
                    batch.close();
                    sums[s + 1] = ParameterChecksum.of(model.getBlock());
                }
                synchronized (checksums) {
                    checksums.add(sums);
                    losses.add(loss);
                }
                return null;
            }
        });
        for (long[] sums : checksums) {
            assertThat(sums).isEqualTo(checksums.get(0));
        }
        for (float[] loss : losses) {
            float first = (loss[0] + loss[1] + loss[2]) / 3;
            float last = (loss[steps - 1] + loss[steps - 2] + loss[steps - 3]) / 3;
            assertThat(last).isLessThan(first / 3);
        }
    }

    @Test
    void broadcastCopiesRootParametersExactly() throws Exception {
        List<Long> before = new ArrayList<>();
        List<Long> after = workers.run(ctx -> {
            try (Model model = Model.newInstance("bcast"); Trainer trainer = Models.mlp(model, 24, 40 + ctx.rank())) {
                synchronized (before) {
                    before.add(ParameterChecksum.of(model.getBlock()));
                }
                ParameterBroadcast.fromRank(ctx, model.getBlock(), 1);
                return ParameterChecksum.of(model.getBlock());
            }
        });
        assertThat(before).doesNotHaveDuplicates();
        assertThat(after).containsOnly(after.get(0));
        assertThat(before).contains(after.get(0)); // rank 1's own initial values
    }
}
