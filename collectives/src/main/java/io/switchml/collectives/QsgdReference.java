package io.switchml.collectives;

import io.switchml.api.ReduceOp;

/**
 * The exact result of {@code qsgd} ({@link CompressedAllReduce} with {@link QsgdCodec}), computed locally:
 * each rank's tensor quantized bucket by bucket as {@link QsgdCodec} states (the formulas are shared,
 * the packing and the network are not), then added in rank order:
 * {@code s = 0; for r = 0..n-1: s = s + q[r][i]}, and for MEAN {@code s / (float) n}. The rounding of
 * element i of rank r at a tensor's step t is {@code uniform(seed, r, t, i)}: t counts the all-reduces
 * of that buffer before this one (0 for the first).
 */
public final class QsgdReference {
    private QsgdReference() {
    }

    /**
     * Rank {@code rank}'s quantized values of elements {@code from .. from+count-1} ({@code values[0..count)}), at
     * step {@code step}, into {@code out[0..count)}. {@code from} must start a bucket and the block must hold whole
     * buckets (or end where the tensor ends), since each bucket is scaled by its own norm.
     */
    public static void quantize(float[] values, int from, int count, int rank, long step, Compression compression,
                                float[] out) {
        int d = compression.bucket();
        if (from % d != 0) {
            throw new IllegalArgumentException("a block must start a bucket of " + d + ", not at " + from);
        }
        int s = compression.levels();
        long seed = compression.seed();
        for (int b = 0; b < count; b += d) {
            int end = Math.min(count, b + d);
            float norm = QsgdCodec.norm(values, b, end, compression.norm());
            float scale = s / norm;
            float unit = norm / s;
            for (int j = b; j < end; j++) {
                int code = QsgdCodec.code(values[j], scale, QsgdCodec.uniform(seed, rank, step, from + j), s);
                out[j] = QsgdCodec.value(code, unit, s);
            }
        }
    }

    /** The result of an all-reduce at {@code step} (0: the first of fresh buffers), given every rank's tensor. */
    public static float[] floats(float[][] tensorByRank, long step, Compression compression, ReduceOp op) {
        int n = tensorByRank.length;
        int length = tensorByRank[0].length;
        float[] sum = new float[length];
        float[] q = new float[length];
        for (int r = 0; r < n; r++) {
            quantize(tensorByRank[r], 0, length, r, step, compression, q);
            for (int i = 0; i < length; i++) {
                sum[i] = sum[i] + q[i];
            }
        }
        return TopKReference.finish(sum, n, op);
    }
}
