package io.switchml.collectives;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;

/**
 * The exact result {@link RingAllReduce} produces, computed locally: the same chunks, the same order
 * of additions per element, the same MEAN division. Tests and benchmarks compare against it bit for
 * bit.
 *
 * <p>Element i lies in chunk c = {@link #chunkOf}(i); its float32 result is
 * {@code s = x[c][i]; for k = 1..n-1: s = x[(c+k) mod n][i] + s;} then, for MEAN, {@code s / (float) n}.
 */
public final class RingReference {
    private RingReference() {
    }

    /** The chunk (= the rank whose value starts the sum) of element {@code index} of a tensor of {@code length}. */
    public static int chunkOf(int length, int workers, int index) {
        return Partition.of(length, workers).partOf(index);
    }

    /** One element's float32 result, given each rank's value of it and the rank that starts the sum. */
    public static float element(float[] valueByRank, int firstRank, ReduceOp op) {
        int n = valueByRank.length;
        float s = valueByRank[firstRank];
        for (int k = 1; k < n; k++) {
            s = valueByRank[(firstRank + k) % n] + s;
        }
        return op == ReduceOp.MEAN ? s / n : s;
    }

    /** The whole float32 result, given each rank's tensor (all of one length). */
    public static float[] floats(float[][] tensorByRank, ReduceOp op) {
        int n = tensorByRank.length;
        int length = tensorByRank[0].length;
        Partition chunks = Partition.of(length, n);
        float[] result = new float[length];
        float[] values = new float[n];
        for (int c = 0; c < n; c++) {
            for (int i = chunks.start(c), end = i + chunks.size(c); i < end; i++) {
                for (int r = 0; r < n; r++) {
                    values[r] = tensorByRank[r][i];
                }
                result[i] = element(values, c, op);
            }
        }
        return result;
    }

    /** The int32 result: wrapping sum, Java division by n for MEAN (any order gives the same). */
    public static int[] ints(int[][] tensorByRank, ReduceOp op) {
        return ReferenceAllReduce.ints(tensorByRank, op);
    }
}
