package io.switchml.bench;

import io.switchml.client.ReduceOp;
import io.switchml.client.ReferenceAllReduce;

/**
 * Checks an all-reduce result bit for bit against {@link ReferenceAllReduce}, regenerating every
 * rank's input block by block from the {@link TensorGenerator}, so memory stays O(block).
 */
public final class ResultVerifier {
    private final TensorGenerator generator;
    private final int workers;
    private final int elementsPerPacket;

    public ResultVerifier(TensorGenerator generator, int workers, int elementsPerPacket) {
        this.generator = generator;
        this.workers = workers;
        this.elementsPerPacket = elementsPerPacket;
    }

    /** Index of the first wrong element, or -1 when every element is exact. */
    public long firstMismatch(float[] result, int length) {
        float[][] blocks = new float[workers][elementsPerPacket];
        float[] expected = new float[elementsPerPacket];
        for (int from = 0; from < length; from += elementsPerPacket) {
            int len = Math.min(elementsPerPacket, length - from);
            for (int r = 0; r < workers; r++) {
                generator.fill(r, blocks[r], from, len);
            }
            ReferenceAllReduce.floatBlock(blocks, len, ReduceOp.SUM, expected);
            for (int i = 0; i < len; i++) {
                if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(result[from + i])) {
                    return from + i;
                }
            }
        }
        return -1;
    }

    public long firstMismatch(int[] result, int length) {
        int[][] blocks = new int[workers][elementsPerPacket];
        int[] expected = new int[elementsPerPacket];
        for (int from = 0; from < length; from += elementsPerPacket) {
            int len = Math.min(elementsPerPacket, length - from);
            for (int r = 0; r < workers; r++) {
                generator.fill(r, blocks[r], from, len);
            }
            ReferenceAllReduce.intBlock(blocks, len, ReduceOp.SUM, expected);
            for (int i = 0; i < len; i++) {
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
