package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Results through the switch are exact (equal, bit for bit, to the reference model of block
 * floating point) and identical on every worker, for many worker counts and sizes, and for several
 * all-reduces in a row on one context (the set alternation carried across operations).
 */
class AllReduceExactnessTest {
    /** Sizes around the default 2048-element packet and the 64-slot window, and odd ones. */
    private static final int[] SIZES = {1, 7, 2047, 2048, 2049, 64 * 2048 + 13, 300_001, 2048};

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void sumsAreExactAndBitIdenticalOnEveryWorker(int workers) {
        try (LocalCluster cluster = new LocalCluster(workers)) {
            long seed = 1;
            for (int size : SIZES) {
                checkFloatSum(cluster, seed, size, 2048);
                checkIntSum(cluster, seed, size);
                seed++;
            }
            WorkerStatistics.Snapshot stats = cluster.contexts.get(0).statistics().snapshot();
            assertThat(stats.operations()).isEqualTo(2L * SIZES.length);
            assertThat(stats.operationTimeouts()).isZero();
        }
    }

    @Test
    void sixteenMillionFloatsThatAreNotAMultipleOfThePacket() {
        try (LocalCluster cluster = new LocalCluster(3)) {
            checkFloatSum(cluster, 42, (16 << 20) + 5, 2048);
        }
    }

    @Test
    void sixteenMillionInts() {
        try (LocalCluster cluster = new LocalCluster(2)) {
            checkIntSum(cluster, 43, (16 << 20) + 1);
        }
    }

    @Test
    void switchMlSizedPacketsSeveralThreadsAndSwitchPorts() {
        try (LocalCluster cluster = new LocalCluster(3, 2,
                b -> b.elementsPerPacket(64).threads(3).slotsPerThread(8))) {
            long seed = 7;
            for (int size : new int[]{1, 63, 64, 65, 191, 100_000, 5}) {
                checkFloatSum(cluster, seed, size, 64);
                checkIntSum(cluster, seed++, size);
            }
        }
    }

    @Test
    void jumboAndLoopbackSizedPackets() {
        for (int k : new int[]{256, 15360}) {
            try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.elementsPerPacket(k).slotsPerThread(16))) {
                checkFloatSum(cluster, k, 3 * k + 1, k);
                checkIntSum(cluster, k, 40 * k - 1);
            }
        }
    }

    static void checkFloatSum(LocalCluster cluster, long seed, int length, int elementsPerPacket) {
        int n = cluster.contexts.size();
        float[][] inputs = TestTensors.floatsByRank(seed, n, length);
        List<float[]> results = cluster.onEveryWorker((rank, ctx) -> {
            float[] out = new float[length];
            ctx.allReduce(inputs[rank], out, ReduceOp.SUM);
            return out;
        });
        float[] expected = ReferenceAllReduce.floats(inputs, elementsPerPacket, ReduceOp.SUM);
        assertCloseToTrueSum(inputs, expected, elementsPerPacket);
        for (int r = 0; r < n; r++) {
            assertThat(results.get(r)).as("rank %d, %d elements", r, length).isEqualTo(expected);
        }
    }

    static void checkIntSum(LocalCluster cluster, long seed, int length) {
        int n = cluster.contexts.size();
        int[][] inputs = TestTensors.intsByRank(seed, n, length);
        List<int[]> results = cluster.onEveryWorker((rank, ctx) -> {
            int[] out = new int[length];
            ctx.allReduce(inputs[rank], out, ReduceOp.SUM);
            return out;
        });
        int[] expected = new int[length];
        for (int[] input : inputs) {
            for (int i = 0; i < length; i++) {
                expected[i] += input[i];
            }
        }
        for (int r = 0; r < n; r++) {
            assertThat(results.get(r)).as("rank %d, %d elements", r, length).isEqualTo(expected);
        }
    }

    /** The reference model itself must be a good sum: within n rounding steps of the block scale. */
    private static void assertCloseToTrueSum(float[][] inputs, float[] result, int k) {
        int n = inputs.length;
        for (int from = 0; from < result.length; from += k) {
            int to = Math.min(result.length, from + k);
            float maxAbs = 0;
            for (float[] input : inputs) {
                for (int i = from; i < to; i++) {
                    maxAbs = Math.max(maxAbs, Math.abs(input[i]));
                }
            }
            double step = Math.scalb(2.0, Math.getExponent(maxAbs)) / (Integer.MAX_VALUE / n);
            for (int i = from; i < to; i++) {
                double exact = 0;
                for (float[] input : inputs) {
                    exact += input[i];
                }
                assertThat((double) result[i]).isCloseTo(exact,
                        org.assertj.core.data.Offset.offset(n * step + Math.ulp(result[i])));
            }
        }
    }
}
