package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Blocks that are zero at every worker go as one-element packets (docs/ARCHITECTURE.md section 14):
 * the results are the dense protocol's and the reference's bit for bit, on every worker, whichever
 * mix of zero, negative-zero, subnormal and ordinary blocks the ranks hold; only blocks zero at every
 * worker are skipped; and the bytes on the wire shrink with them.
 */
class ZeroBlockSkippingTest {
    private static final int K = TestDefaults.ELEMENTS_PER_PACKET;

    /** What rank r's block b holds: the kinds a sparse gradient mixes. */
    private enum BlockKind { ZERO_EVERYWHERE, NEGATIVE_ZERO_EVERYWHERE, ZERO_AT_RANK_0_ONLY, SUBNORMAL_AT_LAST_RANK, DENSE }

    private static BlockKind kindOf(int block) {
        return BlockKind.values()[block % BlockKind.values().length];
    }

    /**
     * Values whose blocks cycle through {@link BlockKind} (over {@link TestTensors}' own, which has all-zero
     * blocks of its own); the tail block is short when length is not a multiple of K.
     */
    private static float[][] sparseInputs(long seed, int n, int length) {
        float[][] inputs = TestTensors.floatsByRank(seed, n, length);
        for (int r = 0; r < n; r++) {
            for (int i = 0; i < length; i++) {
                BlockKind kind = kindOf(i / K);
                switch (kind) {
                    case ZERO_EVERYWHERE -> inputs[r][i] = 0f;
                    case NEGATIVE_ZERO_EVERYWHERE -> inputs[r][i] = (i + r) % 2 == 0 ? -0f : 0f;
                    case ZERO_AT_RANK_0_ONLY -> inputs[r][i] = r == 0 ? 0f : inputs[r][i];
                    case SUBNORMAL_AT_LAST_RANK -> inputs[r][i] = r == n - 1 && i % 7 == 0 ? Float.MIN_VALUE : 0f;
                    case DENSE -> {
                    }
                }
            }
        }
        return inputs;
    }

    /** Blocks of K elements (the lanes' shares are whole blocks) whose every value is +0.0 or -0.0 at every rank. */
    private static long blocksZeroEverywhere(float[][] inputs) {
        int length = inputs[0].length;
        long count = 0;
        for (int from = 0; from < length; from += K) {
            boolean zero = true;
            for (float[] rank : inputs) {
                for (int i = from; i < Math.min(length, from + K) && zero; i++) {
                    zero = (Float.floatToRawIntBits(rank[i]) & 0x7FFFFFFF) == 0;
                }
            }
            count += zero ? 1 : 0;
        }
        return count;
    }


    private static long skipped(LocalCluster cluster) {
        return cluster.contexts.stream().mapToLong(c -> c.statistics().zeroBlocksSkipped()).sum();
    }


    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2, 4})
    void resultsAreTheDenseProtocolsAndTheReferencesBitForBit(int n) {
        // Two lanes, so that each skips in its own share; one-round off, so small tensors take the skipping path too.
        try (LocalCluster skipping = new LocalCluster(n, 1, b -> b.threads(2).oneRoundElements(0));
             LocalCluster dense = new LocalCluster(n, 1, b -> b.threads(2).oneRoundElements(0).skipZeroBlocks(false))) {
            long seed = 700L * n;
            for (int length : new int[]{1, K, 5 * K, 40 * K + 3}) {
                for (ReduceOp op : ReduceOp.values()) {
                    float[][] inputs = sparseInputs(seed++, n, length);
                    long skippedBefore = skipped(skipping);
                    long sentBefore = skipping.bytesSent();
                    long denseBefore = dense.bytesSent();
                    List<float[]> withSkipping = skipping.allReduce(inputs, op);
                    List<float[]> without = dense.allReduce(inputs, op);
                    float[] expected = ReferenceAllReduce.floats(inputs, K, op);
                    String where = n + " workers, " + length + " elements, " + op;
                    for (int r = 0; r < n; r++) {
                        assertThat(withSkipping.get(r)).as("%s, rank %d with skipping", where, r).isEqualTo(expected);
                        assertThat(without.get(r)).as("%s, rank %d dense", where, r).isEqualTo(expected);
                        for (int i = 0; i < length; i++) {
                            if (kindOf(i / K) == BlockKind.NEGATIVE_ZERO_EVERYWHERE) {
                                assertThat(Float.floatToRawIntBits(withSkipping.get(r)[i])).as("%s: +0.0", where).isZero();
                            }
                        }
                    }
                    long zeroBlocks = blocksZeroEverywhere(inputs);
                    assertThat(skipped(skipping) - skippedBefore).as("%s: blocks skipped", where).isEqualTo(n * zeroBlocks);
                    if (zeroBlocks > 0 && length >= K) {
                        assertThat(skipping.bytesSent() - sentBefore).as("%s: bytes sent", where)
                                .isLessThan(dense.bytesSent() - denseBefore);
                    }
                }
            }
            assertThat(skipped(dense)).as("a job that did not ask skips nothing").isZero();
        }
    }

    /** Zero everywhere except a fraction of blocks, each non-zero at one random rank or at all of them. */
    private static float[][] mostlyZeroInputs(long seed, int n, int length, double nonZeroBlocks) {
        float[][] values = TestTensors.floatsByRank(seed, n, length);
        float[][] inputs = new float[n][length];
        SplittableRandom random = new SplittableRandom(seed);
        for (int from = 0; from < length; from += K) {
            if (random.nextDouble() >= nonZeroBlocks) {
                continue;
            }
            int only = random.nextBoolean() ? random.nextInt(n) : -1;
            for (int r = 0; r < n; r++) {
                if (only < 0 || only == r) {
                    System.arraycopy(values[r], from, inputs[r], from, Math.min(K, length - from));
                    inputs[r][from] = 1f + r; // TestTensors has zero blocks of its own
                }
            }
        }
        return inputs;
    }

    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {1, 3, 16})
    void longZeroRunsCostAFewRoundsAndStayExactUnderLossDuplicationAndReordering(int window) {
        int n = 3;
        int length = 600 * K + 11;
        FaultInjection faults = new FaultInjection(0.03, 0.03, 0.3, 2_000, 17 + window);
        try (LocalCluster quiet = new LocalCluster(n, 1, b -> b.slotsPerThread(window).oneRoundElements(0));
             LocalCluster faulty = new LocalCluster(n, 1, b -> b.slotsPerThread(window).oneRoundElements(0)
                     .faultInjection(faults).operationTimeout(java.time.Duration.ofSeconds(60)))) {
            for (int c = 0; c < 3; c++) {
                float[][] inputs = mostlyZeroInputs(31L * window + c, n, length, 0.03);
                float[] expected = ReferenceAllReduce.floats(inputs, K, ReduceOp.SUM);
                long zeroBlocks = blocksZeroEverywhere(inputs);
                for (LocalCluster cluster : List.of(quiet, faulty)) {
                    long skippedBefore = skipped(cluster);
                    long[] before = cluster.statisticsTotals();
                    List<float[]> results = cluster.allReduce(inputs, ReduceOp.SUM);
                    String where = "window " + window + ", case " + c + (cluster == faulty ? ", with faults" : "");
                    for (int r = 0; r < n; r++) {
                        assertThat(results.get(r)).as("%s, rank %d", where, r).isEqualTo(expected);
                    }
                    assertThat(skipped(cluster) - skippedBefore).as("%s: blocks skipped", where).isEqualTo(n * zeroBlocks);
                    long[] after = cluster.statisticsTotals();
                    long fresh = (after[0] - before[0]) - (after[1] - before[1]);
                    // 601 blocks, about 18 with values: their rounds, a stand-in before each and one per 64 zero
                    // blocks of a slot, and the bootstrap round; a packet per block would be 601 + window each.
                    assertThat(fresh / n).as("%s: packets per worker, retransmissions aside", where).isLessThan(150);
                }
            }
        }
    }

    @Test
    void anAllZeroTensorCostsOneElementPerBlockAndWritesPositiveZerosIntoADirectBuffer() {
        int n = 3;
        int length = 64 * K;
        try (LocalCluster cluster = new LocalCluster(n, 1, b -> b.oneRoundElements(0))) {
            long sentBefore = cluster.bytesSent();
            List<float[]> results = cluster.onEveryWorker((rank, ctx) -> {
                FloatBuffer in = ByteBuffer.allocateDirect(4 * length).order(ByteOrder.nativeOrder()).asFloatBuffer();
                for (int i = 0; i < length; i++) {
                    in.put(i, i % 2 == 0 ? -0f : 0f);
                }
                FloatBuffer out = ByteBuffer.allocateDirect(4 * length).order(ByteOrder.nativeOrder()).asFloatBuffer();
                for (int i = 0; i < length; i++) {
                    out.put(i, Float.NaN);
                }
                ctx.allReduce(in, out, ReduceOp.SUM);
                float[] copy = new float[length];
                out.get(0, copy);
                return copy;
            });
            for (float[] result : results) {
                for (float x : result) {
                    assertThat(Float.floatToRawIntBits(x)).as("+0.0, not %s", x).isZero();
                }
            }
            assertThat(skipped(cluster)).isEqualTo((long) n * 64);
            // The blocks as one element each, plus the bootstrap round's exponent packets: far below the tensor.
            assertThat(cluster.bytesSent() - sentBefore).as("bytes sent").isLessThan((long) n * length * 4 / 50);
        }
    }

    @Test
    void aTwoLevelHierarchySkipsTheSameBlocksExactly() {
        int n = 4;
        int length = 20 * K + 5;
        try (LocalCluster tree = LocalCluster.hierarchy(2, n, 1, b -> b.oneRoundElements(0))) {
            float[][] inputs = sparseInputs(91, n, length);
            List<float[]> results = tree.allReduce(inputs, ReduceOp.SUM);
            float[] expected = ReferenceAllReduce.floats(inputs, K, ReduceOp.SUM);
            for (float[] result : results) {
                assertThat(result).isEqualTo(expected);
            }
            assertThat(skipped(tree)).isEqualTo(n * blocksZeroEverywhere(inputs));
        }
    }
}
