package io.switchml.bench;

import io.switchml.client.ReduceOp;
import io.switchml.client.ReferenceAllReduce;
import io.switchml.collectives.ParameterServerReference;
import io.switchml.collectives.RingReference;

/**
 * Checks an all-reduce result bit for bit against the exact result of the algorithm that produced
 * it, regenerating every rank's input block by block from the {@link TensorGenerator}, so memory
 * stays O(block). The loop is shared; what differs per algorithm is the float32 arithmetic, a
 * {@link FloatReference}: {@code switchml} rounds per packet ({@link ReferenceAllReduce}), {@code ring}
 * and {@code ps} per element, in their own order of additions ({@link RingReference},
 * {@link ParameterServerReference}). int32 sums wrap and do not depend on the order, so every
 * algorithm's int32 result is {@link ReferenceAllReduce}'s.
 */
public final class ResultVerifier {
    /** Elements regenerated at a time when the algorithm's arithmetic does not depend on a block size. */
    static final int DEFAULT_BLOCK = 4096;

    /** One algorithm's exact float32 SUM of a block of elements. */
    @FunctionalInterface
    public interface FloatReference {
        /**
         * @param blockByRank every rank's values of elements {@code from .. from+count-1}, at indices 0..count-1
         * @param length      the tensor's length
         * @param out         receives the expected results, at indices 0..count-1
         */
        void expected(float[][] blockByRank, int from, int count, int length, float[] out);
    }

    /** One algorithm's exact float32 SUM of one element, given every rank's value of it. */
    @FunctionalInterface
    private interface ElementReference {
        float expected(float[] valueByRank, int index, int length);
    }

    private final TensorGenerator generator;
    private final int workers;
    private final int blockElements;
    private final FloatReference floats;

    /**
     * @param blockElements elements per block: the blocks start at multiples of it, as the algorithm's do if its
     *                      rounding depends on them
     */
    public ResultVerifier(TensorGenerator generator, int workers, int blockElements, FloatReference floats) {
        if (workers < 1 || blockElements < 1) {
            throw new IllegalArgumentException("need at least one worker and one element per block");
        }
        this.generator = generator;
        this.workers = workers;
        this.blockElements = blockElements;
        this.floats = floats;
    }

    /** SwitchML: block floating point, one exponent per packet of {@code elementsPerPacket} elements. */
    public static ResultVerifier switchMl(TensorGenerator generator, int workers, int elementsPerPacket) {
        return new ResultVerifier(generator, workers, elementsPerPacket,
                (blocks, from, count, length, out) -> ReferenceAllReduce.floatBlock(blocks, count, ReduceOp.SUM, out));
    }

    /** The ring: element i summed around the ring starting at the rank whose chunk holds it. */
    public static ResultVerifier ring(TensorGenerator generator, int workers) {
        return perElement(generator, workers, (values, index, length) ->
                RingReference.element(values, RingReference.chunkOf(length, workers, index), ReduceOp.SUM));
    }

    /** The parameter servers: every element summed in rank order. */
    public static ResultVerifier parameterServer(TensorGenerator generator, int workers) {
        return perElement(generator, workers, (values, index, length) -> ParameterServerReference.element(values, ReduceOp.SUM));
    }

    private static ResultVerifier perElement(TensorGenerator generator, int workers, ElementReference element) {
        float[] values = new float[workers];
        return new ResultVerifier(generator, workers, DEFAULT_BLOCK, (blocks, from, count, length, out) -> {
            for (int i = 0; i < count; i++) {
                for (int r = 0; r < workers; r++) {
                    values[r] = blocks[r][i];
                }
                out[i] = element.expected(values, from + i, length);
            }
        });
    }

    /** Index of the first wrong element, or -1 when every element is exact. */
    public long firstMismatch(float[] result, int length) {
        float[][] blocks = new float[workers][blockElements];
        float[] expected = new float[blockElements];
        for (int from = 0; from < length; from += blockElements) {
            int count = Math.min(blockElements, length - from);
            for (int r = 0; r < workers; r++) {
                generator.fill(r, blocks[r], from, count);
            }
            floats.expected(blocks, from, count, length, expected);
            for (int i = 0; i < count; i++) {
                if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(result[from + i])) {
                    return from + i;
                }
            }
        }
        return -1;
    }

    public long firstMismatch(int[] result, int length) {
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
