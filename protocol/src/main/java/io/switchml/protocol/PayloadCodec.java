package io.switchml.protocol;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.Arrays;

/**
 * Whole payloads between tensors and packets, for the hot path: one pass over plain arrays that the
 * JIT compiles to tight (on newer JDKs vectorised) loops, and one byte-swapping pass between
 * those arrays and the packet's big-endian payload ({@link AggregationPacket#readElements},
 * {@link AggregationPacket#writeElements}). Element for element the results are those of
 * {@link BlockQuantizer#quantize(float, double)} and {@link BlockQuantizer#dequantize(int, double)},
 * so the reference stays exact.
 *
 * <p>One instance per thread: it holds the scratch arrays of one packet, allocated once.
 */
public final class PayloadCodec {
    private final int[] ints;
    private final float[] floats;

    /** A codec for packets of at most {@code elements} int32 elements. */
    public PayloadCodec(int elements) {
        this.ints = new int[elements];
        this.floats = new float[elements];
    }

    /**
     * Writes {@code src[from, to)} quantized with {@code scale} into the packet's payload, zero-padded
     * to {@code elements}.
     */
    public void quantize(FloatBuffer src, int from, int to, double scale, AggregationPacket dst, int elements) {
        int n = to - from;
        float[] values;
        int base;
        if (src.hasArray()) {
            values = src.array();
            base = src.arrayOffset() + from;
        } else {
            src.get(from, floats, 0, n);
            values = floats;
            base = 0;
        }
        int[] q = ints;
        for (int i = 0; i < n; i++) {
            q[i] = BlockQuantizer.quantize(values[base + i], scale);
        }
        Arrays.fill(q, n, elements, 0);
        dst.writeElements(q, elements);
    }

    /** Writes {@code count} dequantized payload elements, {@code sum / divisor}, to {@code dst[at, at + count)}. */
    public void dequantize(AggregationPacket src, int count, double divisor, FloatBuffer dst, int at) {
        int[] sums = ints;
        src.readElements(sums, count);
        double reciprocal = 1.0 / divisor;
        if (dst.hasArray()) {
            dequantize(sums, count, reciprocal, dst.array(), dst.arrayOffset() + at);
        } else {
            dequantize(sums, count, reciprocal, floats, 0);
            dst.put(at, floats, 0, count);
        }
    }

    private static void dequantize(int[] sums, int count, double reciprocal, float[] out, int base) {
        for (int i = 0; i < count; i++) {
            out[base + i] = BlockQuantizer.dequantizeByReciprocal(sums[i], reciprocal);
        }
    }

    /** Writes {@code src[from, to)} as they are into the packet's payload, zero-padded to {@code elements}. */
    public void encode(IntBuffer src, int from, int to, AggregationPacket dst, int elements) {
        int n = to - from;
        if (src.hasArray() && n == elements) {
            dst.writeElements(src.array(), src.arrayOffset() + from, n);
            return;
        }
        src.get(from, ints, 0, n);
        Arrays.fill(ints, n, elements, 0);
        dst.writeElements(ints, elements);
    }

    /** Writes {@code count} payload sums, divided by {@code divisor} (1 for SUM), to {@code dst[at, at + count)}. */
    public void decode(AggregationPacket src, int count, int divisor, IntBuffer dst, int at) {
        int[] sums = ints;
        src.readElements(sums, count);
        if (divisor != 1) {
            for (int i = 0; i < count; i++) {
                sums[i] /= divisor;
            }
        }
        dst.put(at, sums, 0, count);
    }

    /** Zeroes the first {@code elements} payload elements. */
    public void zeroFill(AggregationPacket dst, int elements) {
        Arrays.fill(ints, 0, elements, 0);
        dst.writeElements(ints, elements);
    }
}
