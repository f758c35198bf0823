package io.switchml.protocol;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;

/**
 * Whole payloads between tensors and packets, for the hot path: one loop per payload that reads the
 * tensor's array and writes the packet's big-endian payload with absolute accesses (or the reverse),
 * which C2 compiles to straight loads, conversions and byte swaps. Values are copied to a scratch
 * array in bulk on the way in, and results on the way out of a direct buffer. Element for element the results are those of
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
        float[] values = copyOut(src, from, n);
        ByteBuffer packet = dst.buffer();
        int at = dst.elementIndex(0);
        for (int i = 0; i < n; i++) {
            packet.putInt(at + i * Integer.BYTES, BlockQuantizer.quantize(values[i], scale));
        }
        zeroFill(dst, n, elements);
    }

    /**
     * {@code src[from, from + n)} in the scratch array, from index 0, whatever the buffer: a loop over
     * an array from index 0 runs about 1.4x faster than one at the tensor's offset, more than the
     * copy costs.
     */
    private float[] copyOut(FloatBuffer src, int from, int n) {
        float[] values = floats;
        if (src.hasArray()) {
            System.arraycopy(src.array(), src.arrayOffset() + from, values, 0, n);
        } else {
            src.get(from, values, 0, n);
        }
        return values;
    }

    /** Writes {@code src[from, to)} as raw float32 bit patterns into the payload (the one-round mode). */
    public void copyRaw(FloatBuffer src, int from, int to, AggregationPacket dst) {
        int n = to - from;
        float[] values = copyOut(src, from, n);
        ByteBuffer packet = dst.buffer();
        int at = dst.elementIndex(0);
        for (int i = 0; i < n; i++) {
            packet.putInt(at + i * Integer.BYTES, Float.floatToRawIntBits(values[i]));
        }
    }

    /** Writes {@code count} dequantized payload elements, {@code sum / divisor}, to {@code dst[at, at + count)}. */
    public void dequantize(AggregationPacket src, int count, double divisor, FloatBuffer dst, int at) {
        double reciprocal = 1.0 / divisor;
        if (dst.hasArray()) {
            dequantize(src, count, reciprocal, dst.array(), dst.arrayOffset() + at);
        } else {
            dequantize(src, count, reciprocal, floats, 0);
            dst.put(at, floats, 0, count);
        }
    }

    private static void dequantize(AggregationPacket src, int count, double reciprocal, float[] out, int base) {
        ByteBuffer packet = src.buffer();
        int from = src.elementIndex(0);
        for (int i = 0; i < count; i++) {
            out[base + i] = BlockQuantizer.dequantizeByReciprocal(packet.getInt(from + i * Integer.BYTES), reciprocal);
        }
    }

    /** Writes {@code src[from, to)} as they are into the packet's payload, zero-padded to {@code elements}. */
    public void encode(IntBuffer src, int from, int to, AggregationPacket dst, int elements) {
        int n = to - from;
        if (src.hasArray()) {
            dst.writeElements(src.array(), src.arrayOffset() + from, n);
        } else {
            src.get(from, ints, 0, n);
            dst.writeElements(ints, n);
        }
        zeroFill(dst, n, elements);
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
        zeroFill(dst, 0, elements);
    }

    private static void zeroFill(AggregationPacket dst, int from, int to) {
        ByteBuffer packet = dst.buffer();
        int at = dst.elementIndex(0);
        for (int i = from; i < to; i++) {
            packet.putInt(at + i * Integer.BYTES, 0);
        }
    }
}
