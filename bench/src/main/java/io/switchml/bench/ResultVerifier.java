package io.switchml.bench;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.ExactSum;

/**
 * Checks an all-reduce result bit for bit against the exact result of the algorithm that produced
 * it, regenerating every rank's input block by block from the {@link TensorGenerator}, so memory
 * stays O(block). The loop is shared; what differs per algorithm is its float32 arithmetic, its
 * {@link ExactSum} ({@link AllReduceAlgorithm#exactSum}): {@code switchml} rounds per packet, {@code ring}
 * and {@code ps} per element in their own order of additions, {@code qsgd} per bucket; {@code topk}
 * selects over the whole tensor and carries a residual from one all-reduce to the next, so its exact sum
 * replays every rank's compressor over all the rounds the bench ran on the tensor (memory: three
 * tensors). int32 sums wrap and do not depend on the order, so every algorithm's int32 result is
 * {@link ReferenceAllReduce}'s ({@code topk} and {@code qsgd} do not compress int32 tensors).
 */
public final class ResultVerifier {
    private final TensorGenerator generator;
    private final int workers;
    private final ExactSum exact;

    public ResultVerifier(TensorGenerator generator, int workers, ExactSum exact) {
        if (workers < 1) {
            throw new IllegalArgumentException("need at least one worker");
        }
        this.generator = generator;
        this.workers = workers;
        this.exact = exact;
    }

    /** The verifier of {@code algorithm}'s results in {@code context}. */
    public static ResultVerifier of(AllReduceAlgorithm algorithm, TensorGenerator generator, ExactSum.Context context) {
        return new ResultVerifier(generator, context.workers(), algorithm.exactSum(context));
    }

    /** Index of the first wrong element, or -1 when every element is exact. */
    public long firstMismatch(float[] result, int length) {
        if (exact instanceof ExactSum.Whole whole) {
            float[] expected = whole.sum().expected(r -> {
                float[] t = new float[length];
                generator.fill(r, t, 0, length);
                return t;
            }, length);
            for (int i = 0; i < length; i++) {
                if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(result[i])) {
                    return i;
                }
            }
            return -1;
        }
        ExactSum.Blockwise blockwise = (ExactSum.Blockwise) exact;
        int blockElements = Math.max(1, Math.min(blockwise.blockElements(), length));
        float[][] blocks = new float[workers][blockElements];
        float[] expected = new float[blockElements];
        for (int from = 0; from < length; from += blockElements) {
            int count = Math.min(blockElements, length - from);
            for (int r = 0; r < workers; r++) {
                generator.fill(r, blocks[r], from, count);
            }
            blockwise.sum().expected(blocks, from, count, length, expected);
            for (int i = 0; i < count; i++) {
                if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(result[from + i])) {
                    return from + i;
                }
            }
        }
        return -1;
    }

    public long firstMismatch(int[] result, int length) {
        int blockElements = Math.max(1, Math.min(ExactSum.DEFAULT_BLOCK, length));
        int[][] blocks = new int[workers][blockElements];
        int[] expected = new int[blockElements];
        for (int from = 0; from < length; from += blockElements) {
            int count = Math.min(blockElements, length - from);
            for (int r = 0; r < workers; r++) {
                generator.fill(r, blocks[r], from, count);
            }
            ReferenceAllReduce.intBlock(blocks, count, ReduceOp.SUM, expected);
            for (int i = 0; i < count; i++) {
                if (expected[i] != result[from + i]) {
                    return from + i;
                }
            }
        }
        return -1;
    }

    /** A hash of the result's bits, equal on workers whose results are bit-identical. */
    public static long digest(float[] values, int length) {
        long h = 0x9E3779B97F4A7C15L;
        for (int i = 0; i < length; i++) {
            h = (h ^ Float.floatToRawIntBits(values[i])) * 0x100000001B3L;
        }
        return h;
    }

    public static long digest(int[] values, int length) {
        long h = 0x9E3779B97F4A7C15L;
        for (int i = 0; i < length; i++) {
            h = (h ^ values[i]) * 0x100000001B3L;
        }
        return h;
    }
}
