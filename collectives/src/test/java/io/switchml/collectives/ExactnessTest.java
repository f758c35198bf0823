package io.switchml.collectives;

import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;
import io.switchml.collectives.LocalJob.Layout;
import io.switchml.collectives.TestTensors.Passing;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every layout (ring with large and small segments; parameter servers in the workers, one dedicated,
 * three dedicated), 1 to 8 workers, every awkward size, float32 and int32, SUM and MEAN, every way
 * of passing buffers, one all-reduce after another on the same instances: every rank's result must
 * equal the algorithm's reference bit for bit, and the reference must be within rounding of the
 * exact sum.
 */
class ExactnessTest {
    static final List<Layout> LAYOUTS = List.of(
            Layout.ring(CollectiveConfig.DEFAULT_SEGMENT_BYTES),
            Layout.ring(64),
            Layout.ps(0, true, 4096),
            Layout.ps(1, false, CollectiveConfig.DEFAULT_SEGMENT_BYTES),
            Layout.ps(3, false, 8192));

    static Stream<Arguments> jobs() {
        List<Arguments> all = new ArrayList<>();
        for (Layout layout : LAYOUTS) {
            for (int n : new int[]{1, 2, 3, 4, 5, 8}) {
                all.add(Arguments.of(layout, n));
            }
        }
        return all.stream();
    }

    static int[] sizes(int n) {
        return new int[]{0, 1, 7, n - 1, n + 1, 1000, 100_003};
    }

    @ParameterizedTest(name = "{0}, {1} workers")
    @MethodSource("jobs")
    void everySizeTypeAndOpIsExactOnEveryRank(Layout layout, int n) {
        try (LocalJob job = new LocalJob(layout, n)) {
            int call = 0;
            for (int size : sizes(n)) {
                if (layout.segmentBytes() < 1024 && size > 1000) {
                    continue; // tiny segments are for the pipeline's edge cases, not for volume
                }
                for (ReduceOp op : ReduceOp.values()) {
                    long seed = 1000L * n + 31L * size + op.ordinal();
                    Passing passing = Passing.values()[call++ % Passing.values().length];
                    checkFloats(job, layout.algorithm(), TestTensors.floats(n, size, seed), op, passing);
                    passing = Passing.values()[call++ % Passing.values().length];
                    checkInts(job, layout.algorithm(), TestTensors.ints(n, size, seed), op, passing);
                }
            }
        }
    }

    static Stream<Arguments> largeJobs() {
        return Stream.of(Arguments.of(Layout.ring(CollectiveConfig.DEFAULT_SEGMENT_BYTES), 4),
                Arguments.of(Layout.ps(0, true, CollectiveConfig.DEFAULT_SEGMENT_BYTES), 4),
                Arguments.of(Layout.ps(2, false, CollectiveConfig.DEFAULT_SEGMENT_BYTES), 3));
    }

    @ParameterizedTest(name = "{0}, {1} workers")
    @MethodSource("largeJobs")
    void fourMillionElements(Layout layout, int n) {
        int size = 4 << 20;
        try (LocalJob job = new LocalJob(layout, n)) {
            checkFloats(job, layout.algorithm(), TestTensors.floats(n, size, 7), ReduceOp.SUM, Passing.DIRECT_IN_PLACE);
            checkInts(job, layout.algorithm(), TestTensors.ints(n, size, 8), ReduceOp.MEAN, Passing.ARRAY_IN_PLACE);
        }
    }

    @ParameterizedTest(name = "{0}, {1} workers")
    @MethodSource("largeJobs")
    void asyncOperationsQueuedBackToBackCompleteInOrder(Layout layout, int n) {
        int[] sizes = {100_003, 0, 5, 33_333};
        float[][][] floatInputs = new float[sizes.length][][];
        int[][][] intInputs = new int[sizes.length][][];
        for (int k = 0; k < sizes.length; k++) {
            floatInputs[k] = TestTensors.floats(n, sizes[k], 100 + k);
            intInputs[k] = TestTensors.ints(n, sizes[k], 200 + k);
        }
        try (LocalJob job = new LocalJob(layout, n)) {
            List<Object[]> results = job.onEveryRank((rank, allReduce) -> {
                Object[] out = new Object[2 * sizes.length];
                List<CompletableFuture<Void>> pending = new ArrayList<>();
                for (int k = 0; k < sizes.length; k++) {
                    float[] f = floatInputs[k][rank].clone();
                    int[] i = intInputs[k][rank].clone();
                    pending.add(allReduce.allReduceAsync(f, ReduceOp.MEAN));
                    pending.add(allReduce.allReduceAsync(i, ReduceOp.SUM));
                    out[2 * k] = f;
                    out[2 * k + 1] = i;
                }
                CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).orTimeout(60, TimeUnit.SECONDS).join();
                return out;
            });
            for (int k = 0; k < sizes.length; k++) {
                float[] expectedFloats = layout.algorithm().reference(floatInputs[k], ReduceOp.MEAN);
                int[] expectedInts = TestTensors.expectedInts(intInputs[k], ReduceOp.SUM);
                for (int r = 0; r < n; r++) {
                    assertThat(TestTensors.bits((float[]) results.get(r)[2 * k])).as("rank %d, operation %d", r, k)
                            .isEqualTo(TestTensors.bits(expectedFloats));
                    assertThat((int[]) results.get(r)[2 * k + 1]).as("rank %d, operation %d", r, k).isEqualTo(expectedInts);
                }
            }
        }
    }

    static void checkFloats(LocalJob job, Algorithm algorithm, float[][] inputs, ReduceOp op, Passing passing) {
        List<float[]> results = job.onEveryRank((rank, allReduce) -> run(allReduce, inputs[rank], op, passing));
        float[] expected = algorithm.reference(inputs, op);
        TestTensors.assertWithinRoundingOfExactSum(inputs, expected, op);
        int[] expectedBits = TestTensors.bits(expected);
        for (int r = 0; r < results.size(); r++) {
            assertThat(TestTensors.bits(results.get(r)))
                    .as("rank %d of %d, %d float32 elements, %s, %s", r, results.size(), expected.length, op, passing)
                    .isEqualTo(expectedBits);
        }
    }

    static void checkInts(LocalJob job, Algorithm algorithm, int[][] inputs, ReduceOp op, Passing passing) {
        List<int[]> results = job.onEveryRank((rank, allReduce) -> run(allReduce, inputs[rank], op, passing));
        int[] expected = algorithm.reference(inputs, op);
        assertThat(expected).isEqualTo(TestTensors.expectedInts(inputs, op));
        for (int r = 0; r < results.size(); r++) {
            assertThat(results.get(r)).as("rank %d of %d, %d int32 elements, %s, %s", r, results.size(), expected.length, op,
                    passing).isEqualTo(expected);
        }
    }

    private static float[] run(AllReduce allReduce, float[] input, ReduceOp op, Passing passing) {
        try {
            return TestTensors.allReduce(allReduce, input, op, passing);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    private static int[] run(AllReduce allReduce, int[] input, ReduceOp op, Passing passing) {
        try {
            return TestTensors.allReduce(allReduce, input, op, passing);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}
