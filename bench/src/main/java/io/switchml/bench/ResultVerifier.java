package io.switchml.bench;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.collectives.Compression;
import io.switchml.collectives.ParameterServerReference;
import io.switchml.collectives.QsgdReference;
import io.switchml.collectives.RingReference;
import io.switchml.collectives.TopKReference;

/**
 * Checks an all-reduce result bit for bit against the exact result of the algorithm that produced
 * it, regenerating every rank's input block by block from the {@link TensorGenerator}, so memory
 * stays O(block). The loop is shared; what differs per algorithm is the float32 arithmetic, a
 * {@link FloatReference}: {@code switchml} rounds per packet ({@link ReferenceAllReduce}), {@code ring}
 * and {@code ps} per element, in their own order of additions ({@link RingReference},
 * {@link ParameterServerReference}); {@code qsgd} quantizes per bucket ({@link QsgdReference}, blocks of whole
 * buckets). {@code topk} selects over the whole tensor and carries a residual from one all-reduce to the
 * next, so its verifier replays every rank's compressor over all the rounds the bench ran on the tensor
 * ({@link TopKReference#repeated}), one rank at a time (memory: three tensors). int32 sums wrap and do not
 * depend on the order, so every algorithm's int32 result is {@link ReferenceAllReduce}'s ({@code topk}
 * and {@code qsgd} do not compress int32 tensors).
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

    /** An algorithm's exact float32 SUM of a whole tensor, for one whose rounding spans the tensor. */
    @FunctionalInterface
    public interface WholeReference {
        float[] expected(int length);
    }

    private final TensorGenerator generator;
    private final int workers;
    private final int blockElements;
    private final FloatReference floats;
    private final WholeReference whole;

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
        this.whole = null;
    }

    private ResultVerifier(TensorGenerator generator, int workers, WholeReference whole) {
        this.generator = generator;
        this.workers = workers;
        this.blockElements = DEFAULT_BLOCK;
        this.floats = null;
        this.whole = whole;
    }

    /**
     * {@code topk}: the last of {@code rounds} all-reduces of the same generated tensors, every rank's residual
     * starting at zero (the bench runs warm-ups and timed iterations on one buffer per size).
     */
    public static ResultVerifier topK(TensorGenerator generator, int workers, Compression compression, int rounds) {
        return new ResultVerifier(generator, workers, length -> TopKReference.repeated(r -> {
            float[] t = new float[length];
            generator.fill(r, t, 0, length);
            return t;
        }, workers, length, rounds, compression, ReduceOp.SUM));
    }

    /** {@code qsgd}: the all-reduce at step {@code step} of the buffer (the bench's last: warm-ups + iterations - 1). */
    public static ResultVerifier qsgd(TensorGenerator generator, int workers, Compression compression, long step) {
        int d = compression.bucket();
        int block = d >= DEFAULT_BLOCK ? d : d * ((DEFAULT_BLOCK + d - 1) / d); // whole buckets
        float[][] quantized = new float[1][];
        return new ResultVerifier(generator, workers, block, (blocks, from, count, length, out) -> {
            if (quantized[0] == null || quantized[0].length < count) {
                quantized[0] = new float[count];
            }
            float[] q = quantized[0];
            java.util.Arrays.fill(out, 0, count, 0f);
            for (int r = 0; r < workers; r++) {
                QsgdReference.quantize(blocks[r], from, count, r, step, compression, q);
                for (int i = 0; i < count; i++) {
                    out[i] = out[i] + q[i];
                }
            }
        });
    }

    /** SwitchML: block floating point, one exponent per packet of {@code elementsPerPacket} elements. */
    public static ResultVerifier switchMl(TensorGenerator generator, int workers, int elementsPerPacket) {
        return switchMl(generator, workers, elementsPerPacket, false);
    }

    /** The same, in 16-bit lanes where asked: then a packet's block is twice as many values. */
    public static ResultVerifier switchMl(TensorGenerator generator, int workers, int elementsPerPacket,
                                         boolean sixteenBitLanes) {
        return new ResultVerifier(generator, workers, sixteenBitLanes ? 2 * elementsPerPacket : elementsPerPacket,
                (blocks, from, count, length, out) -> ReferenceAllReduce.floatBlock(blocks, count, ReduceOp.SUM,
                        sixteenBitLanes, out));
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
        if (whole != null) {
            float[] expected = whole.expected(length);
            for (int i = 0; i < length; i++) {
                if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(result[i])) {
                    return i;
                }
            }
            return -1;
        }
        int blockElements = Math.max(1, Math.min(this.blockElements, length));
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
