package io.switchml.collectives;

import io.switchml.api.AllReduce;
import io.switchml.api.MismatchedOperationException;
import io.switchml.api.ReduceOp;
import io.switchml.collectives.LocalJob.Layout;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The compression baselines: the top-k selection against its definition, every rank's result against
 * {@link TopKReference} and {@link QsgdReference} bit for bit over several steps (so the residuals and
 * the step-seeded rounding are carried exactly), int32 through the ring, per-buffer state, workers that
 * disagree, and the bytes each worker puts on the wire.
 */
class CompressionTest {
    private static final Layout TOPK = Layout.compressed(Algorithm.TOPK);
    private static final Layout QSGD = Layout.compressed(Algorithm.QSGD);

    // ---- the selection -------------------------------------------------------------------------------

    @Property(tries = 300)
    void theRadixSelectPicksWhatTheDefinitionPicks(@ForAll("tensors") float[] values, @ForAll("fractions") double fraction) {
        int k = (int) Math.round(fraction * values.length);
        assertThat(TopKReference.select(values, k)).isEqualTo(TopKReference.selectByDefinition(values, k));
    }

    @Provide
    Arbitrary<float[]> tensors() {
        // Few distinct magnitudes (many ties), both zeros, infinities, NaN, and values that share their top 16 bits.
        Arbitrary<Float> element = Arbitraries.oneOf(
                Arbitraries.of(0f, -0f, 1f, -1f, 2f, -2f, 1.0000001f, -1.0000001f, Float.MIN_VALUE,
                        Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN),
                Arbitraries.integers().between(0, 1 << 15).map(low -> Float.intBitsToFloat(0x3F80_0000 | low)),
                Arbitraries.floats().between(-1e6f, 1e6f));
        return element.array(float[].class).ofMinSize(0).ofMaxSize(3000);
    }

    @Provide
    Arbitrary<Double> fractions() {
        return Arbitraries.oneOf(Arbitraries.of(0.0, 1.0), Arbitraries.doubles().between(0, 1));
    }

    @Test
    void aMillionTiesAtTheThresholdGoToTheLowestIndices() {
        float[] values = new float[1 << 20];
        Arrays.fill(values, 0.5f);
        values[999_999] = 3f;
        values[7] = -3f;
        int[] chosen = TopKReference.select(values, 10);
        assertThat(chosen).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 999_999);
        assertThat(chosen).isEqualTo(TopKReference.selectByDefinition(values, 10));
    }

    @Test
    void kIsTheRoundedShareAndAtLeastOne() {
        Compression c = Compression.DEFAULTS;
        assertThat(c.topK(0)).isZero();
        assertThat(c.topK(1)).isEqualTo(1);
        assertThat(c.topK(149)).isEqualTo(1);
        assertThat(c.topK(150)).isEqualTo(2);
        assertThat(c.topK(235_146)).isEqualTo(2351);
        assertThat(c.withRatio(1).topK(7)).isEqualTo(7);
        assertThat(c.codeBits()).isEqualTo(4);
        assertThat(c.withLevels(127).codeBits()).isEqualTo(8);
        assertThat(c.withLevels(1).codeBits()).isEqualTo(2);
        assertThat(c.withLevels(Compression.MAX_LEVELS).codeBits()).isEqualTo(16);
    }

    @Test
    void settingsTravelAsOneLineAndBadOnesAreRefusedByName() {
        Compression c = new Compression(0.05, 127, 64, Compression.Norm.MAX, -3);
        assertThat(Compression.parse(c.toSpec())).isEqualTo(c);
        assertThat(Compression.parse("")).isEqualTo(Compression.DEFAULTS);
        assertThat(Compression.parse("levels=3")).isEqualTo(Compression.DEFAULTS.withLevels(3));
        Compression corrected = Compression.DEFAULTS.withMomentum(0.9).withWarmup(50);
        assertThat(Compression.parse(corrected.toSpec())).isEqualTo(corrected);
        assertThat(corrected.describe(Algorithm.TOPK)).isEqualTo("top-k 1 % with error feedback, warm-up 50 steps, momentum correction 0.9");
        assertThatThrownBy(() -> Compression.DEFAULTS.withMomentum(1)).hasMessageContaining("momentum 1.0 must be in [0, 1)");
        assertThatThrownBy(() -> Compression.DEFAULTS.withMomentum(-0.1)).hasMessageContaining("must be in [0, 1)");
        assertThatThrownBy(() -> Compression.DEFAULTS.withRatio(0)).hasMessageContaining("ratio 0.0 must be in (0, 1]");
        assertThatThrownBy(() -> Compression.DEFAULTS.withRatio(1.5)).hasMessageContaining("must be in (0, 1]");
        assertThatThrownBy(() -> Compression.DEFAULTS.withLevels(0)).hasMessageContaining("levels 0 must be in 1..32767");
        assertThatThrownBy(() -> Compression.DEFAULTS.withBucket(0)).hasMessageContaining("bucket 0 must be in");
        assertThatThrownBy(() -> Compression.parse("ratio=0.1,bits=4")).hasMessageContaining("unknown compression setting 'bits'");
        assertThatThrownBy(() -> Compression.parse("norm=l1")).hasMessageContaining("unknown QSGD norm 'l1'; known: l2, max");
        assertThat(Algorithm.named("TopK")).isEqualTo(Algorithm.TOPK);
        assertThat(Algorithm.named("qsgd").compressed()).isTrue();
        assertThat(Algorithm.RING.compressed()).isFalse();
    }

    // ---- exactness, step after step ------------------------------------------------------------------------

    /** Each rank all-reduces {@code steps} tensors through the same buffer; returns every rank's result of every step. */
    private static List<float[][]> runSteps(LocalJob job, float[][][] tensors, ReduceOp op, boolean direct) {
        int steps = tensors.length;
        return job.onEveryRank((rank, allReduce) -> {
            int length = tensors[0][rank].length;
            float[][] results = new float[steps][];
            float[] array = new float[length];
            FloatBuffer buffer = ByteBuffer.allocateDirect(4 * length).order(ByteOrder.nativeOrder()).asFloatBuffer();
            for (int t = 0; t < steps; t++) {
                if (direct) {
                    buffer.clear();
                    buffer.put(tensors[t][rank]).flip();
                    allReduce.allReduce(buffer, buffer, op);
                    results[t] = new float[length];
                    buffer.duplicate().get(results[t]);
                } else {
                    System.arraycopy(tensors[t][rank], 0, array, 0, length);
                    allReduce.allReduce(array, op);
                    results[t] = array.clone();
                }
            }
            return results;
        });
    }

    private static float[][][] stepTensors(int steps, int n, int length, long seed) {
        float[][][] t = new float[steps][][];
        for (int s = 0; s < steps; s++) {
            t[s] = TestTensors.floats(n, length, seed + 7919L * s);
        }
        return t;
    }

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void topKIsExactOnEveryRankStepAfterStep(int n) {
        checkTopKStepAfterStep(n, Compression.DEFAULTS.withRatio(0.05));
    }

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2, 4})
    void topKWithMomentumCorrectionIsExactOnEveryRankStepAfterStep(int n) {
        checkTopKStepAfterStep(n, Compression.DEFAULTS.withRatio(0.05).withMomentum(0.9).withWarmup(3));
    }

    /** Every rank's result of 4 steps of several lengths and both operations, bit for bit against {@link TopKReference.Job}. */
    private static void checkTopKStepAfterStep(int n, Compression c) {
        try (LocalJob job = new LocalJob(TOPK, n, b -> b.compression(c), java.util.Set.of(), List.of())) {
            int call = 0;
            for (int length : new int[]{0, 1, 7, 1000, 100_003}) {
                for (ReduceOp op : ReduceOp.values()) {
                    float[][][] tensors = stepTensors(4, n, length, 31L * length + op.ordinal());
                    List<float[][]> results = runSteps(job, tensors, op, call++ % 2 == 1);
                    TopKReference.Job reference = new TopKReference.Job(n, length, c);
                    for (int t = 0; t < tensors.length; t++) {
                        int[] expected = TestTensors.bits(reference.allReduce(tensors[t], op));
                        for (int r = 0; r < n; r++) {
                            assertThat(TestTensors.bits(results.get(r)[t])).as("%s: rank %d step %d, %d elements, %s",
                                    c.toSpec(), r, t, length, op).isEqualTo(expected);
                        }
                    }
                }
            }
        }
    }

    /** Three steps of a 3-element tensor, k = 1: what DGC's momentum correction and masking give, worked by hand. */
    private static final float[][] SMALL_GRADIENTS = {{1f, -2f, 0.5f}, {1f, 1f, -3f}, {0f, 0f, 0f}};

    @Test
    void momentumCorrectionAccumulatesTheVelocityAndMasksWhatItSent() {
        Compression c = Compression.DEFAULTS.withRatio(1.0 / 3).withMomentum(0.5);
        TopKReference.Worker w = new TopKReference.Worker(3, c);
        // Step 0: u = g = (1, -2, 0.5), a = u; sends index 1 (-2); a and u keep (1, 0, 0.5).
        float[] sum = new float[3];
        w.step(SMALL_GRADIENTS[0], sum);
        assertThat(sum).containsExactly(0f, -2f, 0f);
        assertThat(w.residual()).containsExactly(1f, 0f, 0.5f);
        assertThat(w.velocity()).containsExactly(1f, 0f, 0.5f);
        // Step 1: u = 0.5 u + g = (1.5, 1, -2.75), a = (2.5, 1, -2.25); sends index 0; u's index 0 cleared.
        sum = new float[3];
        w.step(SMALL_GRADIENTS[1], sum);
        assertThat(sum).containsExactly(2.5f, 0f, 0f);
        assertThat(w.residual()).containsExactly(0f, 1f, -2.25f);
        assertThat(w.velocity()).containsExactly(0f, 1f, -2.75f);
        // Step 2, no gradient: the velocity still pushes, u = (0, 0.5, -1.375), a = (0, 1.5, -3.625); sends index 2.
        sum = new float[3];
        w.step(SMALL_GRADIENTS[2], sum);
        assertThat(sum).containsExactly(0f, 0f, -3.625f);
        assertThat(w.residual()).containsExactly(0f, 1.5f, 0f);
        assertThat(w.velocity()).containsExactly(0f, 0.5f, 0f);
        // Plain error feedback sends index 2 at step 1 instead: (1, 0, 0.5) + (1, 1, -3) = (2, 1, -2.5).
        TopKReference.Worker plain = new TopKReference.Worker(3, c.withMomentum(0));
        plain.step(SMALL_GRADIENTS[0], null);
        sum = new float[3];
        plain.step(SMALL_GRADIENTS[1], sum);
        assertThat(sum).containsExactly(0f, 0f, -2.5f);
    }

    @Test
    void theAllReduceWithMomentumCorrectionGivesTheHandWorkedSumsOnEveryRank() {
        Compression c = Compression.DEFAULTS.withRatio(1.0 / 3).withMomentum(0.5);
        float[][] expectedMeans = {{0f, -2f, 0f}, {2.5f, 0f, 0f}, {0f, 0f, -3.625f}};
        try (LocalJob job = new LocalJob(TOPK, 2, b -> b.compression(c), java.util.Set.of(), List.of())) {
            // Both ranks hold the same gradients, so the mean is what one rank sends.
            float[][][] tensors = new float[3][][];
            for (int t = 0; t < 3; t++) {
                tensors[t] = new float[][]{SMALL_GRADIENTS[t], SMALL_GRADIENTS[t]};
            }
            List<float[][]> results = runSteps(job, tensors, ReduceOp.MEAN, false);
            for (int r = 0; r < 2; r++) {
                for (int t = 0; t < 3; t++) {
                    assertThat(results.get(r)[t]).as("rank %d step %d", r, t).containsExactly(expectedMeans[t]);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2, 3, 5})
    void qsgdIsExactOnEveryRankStepAfterStep(int n) {
        List<Compression> settings = List.of(Compression.DEFAULTS,
                Compression.DEFAULTS.withLevels(127).withNorm(Compression.Norm.MAX).withBucket(100),
                Compression.DEFAULTS.withLevels(1).withBucket(1).withSeed(99),
                Compression.DEFAULTS.withLevels(Compression.MAX_LEVELS).withBucket(1 << 20));
        for (Compression c : settings) {
            try (LocalJob job = new LocalJob(QSGD, n, b -> b.compression(c), java.util.Set.of(), List.of())) {
                int call = 0;
                for (int length : new int[]{0, 1, 9, 1000, 100_003}) {
                    for (ReduceOp op : ReduceOp.values()) {
                        float[][][] tensors = stepTensors(3, n, length, 17L * length + op.ordinal());
                        List<float[][]> results = runSteps(job, tensors, op, call++ % 2 == 0);
                        for (int t = 0; t < tensors.length; t++) {
                            int[] expected = TestTensors.bits(QsgdReference.floats(tensors[t], t, c, op));
                            for (int r = 0; r < n; r++) {
                                assertThat(TestTensors.bits(results.get(r)[t]))
                                        .as("%s: rank %d step %d, %d elements, %s", c.toSpec(), r, t, length, op).isEqualTo(expected);
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void aBigTensorOnFourWorkersMatchesTheReferencesOfTheBench() {
        int length = 1 << 22;
        float[][] tensors = TestTensors.floats(4, length, 5);
        for (Layout layout : List.of(TOPK, QSGD)) {
            try (LocalJob job = new LocalJob(layout, 4)) {
                List<float[][]> results = runSteps(job, new float[][][]{tensors, tensors, tensors}, ReduceOp.SUM, false);
                float[] expected = layout == TOPK ? TopKReference.floats(tensors, 3, Compression.DEFAULTS, ReduceOp.SUM)
                        : QsgdReference.floats(tensors, 2, Compression.DEFAULTS, ReduceOp.SUM);
                for (int r = 0; r < 4; r++) {
                    assertThat(TestTensors.bits(results.get(r)[2])).as("%s rank %d", layout, r).isEqualTo(TestTensors.bits(expected));
                }
            }
        }
    }

    @Test
    void int32TensorsGoThroughTheRingUncompressed() {
        for (Layout layout : List.of(TOPK, QSGD)) {
            try (LocalJob job = new LocalJob(layout, 3)) {
                int[][] inputs = TestTensors.ints(3, 10_007, 3);
                ExactnessTest.checkInts(job, layout.algorithm(), inputs, ReduceOp.SUM, TestTensors.Passing.DIRECT_IN_PLACE);
                ExactnessTest.checkInts(job, layout.algorithm(), inputs, ReduceOp.MEAN, TestTensors.Passing.ARRAY_IN_PLACE);
            }
        }
    }

    @Test
    void errorFeedbackSendsEveryElementEventually() {
        // The same gradient every step: what top-k leaves out accumulates until it is sent, so over many steps the
        // average of the results approaches the gradient.
        int length = 1000;
        float[][] g = TestTensors.floats(2, length, 12);
        TopKReference.Job job = new TopKReference.Job(2, length, Compression.DEFAULTS.withRatio(0.1));
        double[] total = new double[length];
        int steps = 400;
        for (int t = 0; t < steps; t++) {
            float[] r = job.allReduce(g, ReduceOp.SUM);
            for (int i = 0; i < length; i++) {
                total[i] += r[i];
            }
        }
        double worst = 0;
        double scale = 0;
        for (int i = 0; i < length; i++) {
            double exact = (double) g[0][i] + g[1][i];
            worst = Math.max(worst, Math.abs(total[i] / steps - exact));
            scale = Math.max(scale, Math.abs(exact));
        }
        assertThat(worst).as("largest error of the average").isLessThan(0.1 * scale);
    }

    @Test
    void qsgdIsUnbiased() {
        Compression c = Compression.DEFAULTS.withBucket(64);
        float[] v = TestTensors.floats(1, 64, 4)[0];
        float norm = QsgdCodec.norm(v, 0, 64, Compression.Norm.L2);
        double[] total = new double[64];
        float[] q = new float[64];
        int steps = 4000;
        for (int t = 0; t < steps; t++) {
            QsgdReference.quantize(v, 0, 64, 0, t, c, q);
            for (int i = 0; i < 64; i++) {
                total[i] += q[i];
                assertThat(Math.abs(q[i])).isLessThanOrEqualTo(norm * 1.0001f);
            }
        }
        for (int i = 0; i < 64; i++) {
            assertThat(Math.abs(total[i] / steps - v[i])).as("element %d", i).isLessThan(0.01 * norm);
        }
    }

    // ---- state per buffer -----------------------------------------------------------------------------------

    @Test
    void eachBufferKeepsItsOwnResidual() {
        int length = 5000;
        Compression c = Compression.DEFAULTS;
        float[][][] a = stepTensors(3, 2, length, 1);
        float[][][] b = stepTensors(3, 2, length, 2);
        try (LocalJob job = new LocalJob(TOPK, 2)) {
            List<float[][]> results = job.onEveryRank((rank, allReduce) -> {
                float[] bufferA = new float[length];
                float[] bufferB = new float[length];
                float[][] out = new float[6][];
                for (int t = 0; t < 3; t++) {
                    System.arraycopy(a[t][rank], 0, bufferA, 0, length);
                    System.arraycopy(b[t][rank], 0, bufferB, 0, length);
                    allReduce.allReduce(bufferA, ReduceOp.SUM);
                    allReduce.allReduce(bufferB, ReduceOp.SUM);
                    out[2 * t] = bufferA.clone();
                    out[2 * t + 1] = bufferB.clone();
                }
                return out;
            });
            TopKReference.Job refA = new TopKReference.Job(2, length, c);
            TopKReference.Job refB = new TopKReference.Job(2, length, c);
            for (int t = 0; t < 3; t++) {
                float[] expectedA = refA.allReduce(a[t], ReduceOp.SUM);
                float[] expectedB = refB.allReduce(b[t], ReduceOp.SUM);
                for (int r = 0; r < 2; r++) {
                    assertThat(TestTensors.bits(results.get(r)[2 * t])).isEqualTo(TestTensors.bits(expectedA));
                    assertThat(TestTensors.bits(results.get(r)[2 * t + 1])).isEqualTo(TestTensors.bits(expectedB));
                }
            }
        }
    }

    // ---- workers that disagree --------------------------------------------------------------------------------

    /** Two ranks of {@code algorithm} whose compression settings are the given ones, rank by rank. */
    private static List<AllReduce> open(Algorithm algorithm, Compression... byRank) {
        List<Listener> listeners = LocalJob.bindAll(byRank.length);
        List<CompletableFuture<AllReduce>> opening = new ArrayList<>();
        for (int r = 0; r < byRank.length; r++) {
            CollectiveConfig config = CollectiveConfig.builder().algorithm(algorithm.id()).rank(r)
                    .endpoints(LocalJob.addresses(listeners)).compression(byRank[r])
                    .connectTimeout(Duration.ofSeconds(20)).operationTimeout(Duration.ofSeconds(20)).build();
            Listener l = listeners.get(r);
            opening.add(CompletableFuture.supplyAsync(() -> Collectives.open(config, l, null)));
        }
        List<AllReduce> all = new ArrayList<>();
        for (CompletableFuture<AllReduce> f : opening) {
            all.add(f.join());
        }
        return all;
    }

    private static Throwable failureOf(CompletableFuture<?> f) {
        try {
            f.get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("did not fail");
    }

    @Test
    void workersWithDifferentSettingsFailNamingBoth() {
        List<AllReduce> job = open(Algorithm.TOPK, Compression.DEFAULTS, Compression.DEFAULTS.withRatio(0.02));
        try {
            float[] x = new float[1000];
            float[] y = new float[1000];
            CompletableFuture<Void> f0 = job.get(0).allReduceAsync(x, ReduceOp.SUM);
            CompletableFuture<Void> f1 = job.get(1).allReduceAsync(y, ReduceOp.SUM);
            assertThat(failureOf(f0)).isInstanceOf(MismatchedOperationException.class)
                    .hasMessageContaining("rank 1 sent a top-k message of 1000 elements with k = 20")
                    .hasMessageContaining("expected a top-k message of 1000 elements with k = 10");
            assertThat(failureOf(f1)).isInstanceOf(MismatchedOperationException.class)
                    .hasMessageContaining("rank 0 sent a top-k message of 1000 elements with k = 10");
        } finally {
            job.forEach(AllReduce::close);
        }
        job = open(Algorithm.TOPK, Compression.DEFAULTS.withMomentum(0.9), Compression.DEFAULTS);
        try {
            CompletableFuture<Void> f0 = job.get(0).allReduceAsync(new float[1000], ReduceOp.SUM);
            CompletableFuture<Void> f1 = job.get(1).allReduceAsync(new float[1000], ReduceOp.SUM);
            assertThat(failureOf(f0)).isInstanceOf(MismatchedOperationException.class)
                    .hasMessageContaining("expected a top-k message of 1000 elements with k = 10 and momentum 0.9");
            assertThat(failureOf(f1)).isInstanceOf(MismatchedOperationException.class)
                    .hasMessageContaining("rank 0 sent a top-k message of 1000 elements with k = 10 and momentum 0.9");
        } finally {
            job.forEach(AllReduce::close);
        }
        job = open(Algorithm.QSGD, Compression.DEFAULTS, Compression.DEFAULTS.withNorm(Compression.Norm.MAX));
        try {
            CompletableFuture<Void> f0 = job.get(0).allReduceAsync(new float[100], ReduceOp.SUM);
            CompletableFuture<Void> f1 = job.get(1).allReduceAsync(new float[100], ReduceOp.SUM);
            assertThat(failureOf(f0)).isInstanceOf(MismatchedOperationException.class).hasMessageContaining("the max norm")
                    .hasMessageContaining("expected a QSGD message of 100 elements with s = 7, buckets of 512 and the l2 norm");
            assertThat(failureOf(f1)).isInstanceOf(MismatchedOperationException.class);
        } finally {
            job.forEach(AllReduce::close);
        }
    }

    @Test
    void aFloatAgainstAnIntAllReduceIsAMismatchNotGarbage() {
        List<AllReduce> job = open(Algorithm.QSGD, Compression.DEFAULTS, Compression.DEFAULTS);
        try {
            CompletableFuture<Void> f0 = job.get(0).allReduceAsync(new float[100], ReduceOp.SUM);
            CompletableFuture<Void> f1 = job.get(1).allReduceAsync(new int[100], ReduceOp.SUM);
            assertThat(failureOf(f0)).isInstanceOf(MismatchedOperationException.class)
                    .hasMessageContaining("all-reduce #1 of 100 int32 elements");
            assertThat(failureOf(f1)).isInstanceOf(MismatchedOperationException.class)
                    .hasMessageContaining("block of the compressed all-reduce #1");
        } finally {
            job.forEach(AllReduce::close);
        }
        job = open(Algorithm.TOPK, Compression.DEFAULTS, Compression.DEFAULTS);
        try {
            CompletableFuture<Void> f0 = job.get(0).allReduceAsync(new float[100], ReduceOp.SUM);
            CompletableFuture<Void> f1 = job.get(1).allReduceAsync(new float[101], ReduceOp.SUM);
            assertThat(failureOf(f0)).isInstanceOf(MismatchedOperationException.class)
                    .hasMessageContaining("a top-k message of 101 elements");
            assertThat(failureOf(f1)).isInstanceOf(MismatchedOperationException.class);
        } finally {
            job.forEach(AllReduce::close);
        }
    }

    // ---- bytes on the wire ------------------------------------------------------------------------------------

    private static long[] bytesOfOneAllReduce(Layout layout, int n, int length) {
        try (LocalJob job = new LocalJob(layout, n)) {
            float[][] inputs = TestTensors.floats(n, length, 9);
            List<Long> sent = job.onEveryRank((rank, allReduce) -> {
                allReduce.barrier();
                long before = ((BytesSent) allReduce).bytesSent();
                allReduce.allReduce(inputs[rank].clone(), ReduceOp.SUM);
                allReduce.barrier(); // a hosted server may still be sending the results to the other ranks
                byte[] value = allReduce.broadcast(new byte[1000], 0);
                assertThat(value).hasSize(1000);
                return ((BytesSent) allReduce).bytesSent() - before; // barriers and broadcasts not counted
            });
            return sent.stream().mapToLong(Long::longValue).toArray();
        }
    }

    @Test
    void everyAlgorithmCountsTheBytesItSends() {
        int n = 4;
        int length = 1 << 18;
        long tensor = 4L * length;
        Compression c = Compression.DEFAULTS;
        for (long b : bytesOfOneAllReduce(TOPK, n, length)) {
            assertThat(b).as("topk: n-1 blocks of header + message").isEqualTo((n - 1) * (MessageHeader.BYTES
                    + CompressedMessage.HEADER_BYTES + 8L * c.topK(length)));
        }
        for (long b : bytesOfOneAllReduce(QSGD, n, length)) {
            assertThat(b).as("qsgd").isEqualTo((n - 1) * (MessageHeader.BYTES + new QsgdCodec(c).messageBytes(length)));
            assertThat((double) b / tensor).isBetween(0.375, 0.40); // 3 x (1/8 + norms)
        }
        for (long b : bytesOfOneAllReduce(Layout.ring(CollectiveConfig.DEFAULT_SEGMENT_BYTES), n, length)) {
            assertThat(b).as("ring: 2(n-1)/n of the tensor and a header").isEqualTo(2 * (n - 1) * tensor / n + MessageHeader.BYTES);
        }
        for (long b : bytesOfOneAllReduce(Layout.ps(0, true, CollectiveConfig.DEFAULT_SEGMENT_BYTES), n, length)) {
            // Pushes to the 3 other servers, and this rank's server's results to the 3 other ranks.
            assertThat(b).as("ps in the workers").isBetween(2 * (n - 1) * tensor / n, 2 * (n - 1) * tensor / n + 4096);
        }
    }

    @Test
    void oneWorkerSendsNothingAndGetsItsOwnCompressedTensor() {
        float[][] x = TestTensors.floats(1, 1000, 3);
        try (LocalJob job = new LocalJob(TOPK, 1)) {
            float[] out = x[0].clone();
            job.workers.get(0).allReduce(out, ReduceOp.MEAN);
            assertThat(TestTensors.bits(out)).isEqualTo(TestTensors.bits(TopKReference.floats(x, 1, Compression.DEFAULTS,
                    ReduceOp.MEAN)));
            assertThat(Arrays.stream(TestTensors.bits(out)).filter(bits -> bits != 0).count()).isEqualTo(10);
            assertThat(((BytesSent) job.workers.get(0)).bytesSent()).isZero();
        }
    }

    @Test
    void theReferencesOfTheAlgorithmEnumAreTheFirstStep() {
        float[][] x = TestTensors.floats(3, 2000, 8);
        assertThat(TestTensors.bits(Algorithm.TOPK.reference(x, ReduceOp.SUM)))
                .isEqualTo(TestTensors.bits(new TopKReference.Job(3, 2000, Compression.DEFAULTS).allReduce(x, ReduceOp.SUM)));
        assertThat(TestTensors.bits(Algorithm.QSGD.reference(x, ReduceOp.MEAN)))
                .isEqualTo(TestTensors.bits(QsgdReference.floats(x, 0, Compression.DEFAULTS, ReduceOp.MEAN)));
    }
}
