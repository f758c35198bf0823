package io.switchml.collectives;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;

/**
 * The exact result {@link ParameterServerAllReduce} produces, computed locally. A server adds the
 * workers' values in rank order, whatever the sharding:
 * {@code s = x[0][i]; for r = 1..n-1: s = s + x[r][i];} then, for MEAN, {@code s / (float) n}.
 */
public final class ParameterServerReference {
    private ParameterServerReference() {
    }

    /** One element's float32 result, given each rank's value of it. */
    public static float element(float[] valueByRank, ReduceOp op) {
        int n = valueByRank.length;
        float s = valueByRank[0];
        for (int r = 1; r < n; r++) {
            s = s + valueByRank[r];
        }
        return op == ReduceOp.MEAN ? s / n : s;
    }

    /** The whole float32 result, given each rank's tensor (all of one length). */
    public static float[] floats(float[][] tensorByRank, ReduceOp op) {
        int n = tensorByRank.length;
        int length = tensorByRank[0].length;
        float[] result = new float[length];
        float[] values = new float[n];
        for (int i = 0; i < length; i++) {
            for (int r = 0; r < n; r++) {
                values[r] = tensorByRank[r][i];
            }
            result[i] = element(values, op);
        }
        return result;
    }

    /** The int32 result: wrapping sum, Java division by n for MEAN. */
    public static int[] ints(int[][] tensorByRank, ReduceOp op) {
        return ReferenceAllReduce.ints(tensorByRank, op);
    }
}
