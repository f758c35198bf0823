package io.switchml.protocol;

import io.switchml.protocol.kernels.Kernels;
import io.switchml.protocol.kernels.PayloadKernels;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.Arrays;

/**
 * Whole payloads between tensors and packets, for the worker's hot path, on this JVM's
 * {@link PayloadKernels}: a tensor backed by an array is read and written in place, any other
 * (direct, mapped) crosses a scratch array of this codec in one bulk copy. Element for element the
 * results are those of {@link BlockQuantizer#quantize(float, double)} and
 * {@link BlockQuantizer#dequantize(int, double)}, so the reference stays exact.
 *
 * <p>One instance per thread: it holds the scratch of one packet, allocated once.
 */
public final class PayloadCodec {
    private final PayloadKernels kernels;
    private final int[] ints;
    private final float[] floats;

    /** A codec for packets of at most {@code elements} int32 elements, on this JVM's kernels ({@link Kernels}). */
    public PayloadCodec(int elements) {
        this(Kernels.create(elements), elements);
    }

    /** A codec on the given kernels, made for packets of at most {@code elements} elements. */
    public PayloadCodec(PayloadKernels kernels, int elements) {
        this.kernels = kernels;
        this.ints = new int[elements];
        this.floats = new float[2 * elements]; // 16-bit lanes carry two values per element
    }

    /** The kernels this codec runs. */
    public PayloadKernels kernels() {
        return kernels;
    }

    /** The largest magnitude bit pattern in {@code src[from, to)} (see {@link BlockQuantizer#maxMagnitudeBits}). */
    public int maxMagnitudeBits(FloatBuffer src, int from, int to) {
        if (src.hasArray()) {
            return kernels.maxMagnitudeBits(src.array(), src.arrayOffset() + from, src.arrayOffset() + to);
        }
        int max = 0;
        for (int at = from; at < to; at += floats.length) {
            int n = Math.min(floats.length, to - at);
            src.get(at, floats, 0, n);
            max = Math.max(max, kernels.maxMagnitudeBits(floats, 0, n));
        }
        return max;
    }

    /**
     * Writes {@code src[from, to)} quantized with {@code scale} into the packet's payload, zero-padded
     * to {@code elements}.
     */
    public void quantize(FloatBuffer src, int from, int to, double scale, AggregationPacket dst, int elements) {
        int n = to - from;
        if (src.hasArray()) {
            kernels.quantize(src.array(), src.arrayOffset() + from, n, scale, dst.buffer(), dst.elementIndex(0));
        } else {
            src.get(from, floats, 0, n);
            kernels.quantize(floats, 0, n, scale, dst.buffer(), dst.elementIndex(0));
        }
        zeroFill(dst, n, elements);
    }

    /** 16-bit lanes: writes {@code src[from, to)} quantized with {@code scale}, two values per payload element. */
    public void quantizePairs(FloatBuffer src, int from, int to, double scale, AggregationPacket dst) {
        int n = to - from;
        if (src.hasArray()) {
            kernels.quantizePairs(src.array(), src.arrayOffset() + from, n, scale, dst.buffer(), dst.elementIndex(0));
        } else {
            src.get(from, floats, 0, n);
            kernels.quantizePairs(floats, 0, n, scale, dst.buffer(), dst.elementIndex(0));
        }
    }

    /** 16-bit lanes: writes the {@code count} values of the payload's lane sums, {@code sum / divisor}, to {@code dst[at, at + count)}. */
    public void dequantizePairs(AggregationPacket src, int count, double divisor, FloatBuffer dst, int at) {
        double reciprocal = 1.0 / divisor;
        if (dst.hasArray()) {
            kernels.dequantizePairs(src.buffer(), src.elementIndex(0), count, reciprocal, dst.array(), dst.arrayOffset() + at);
        } else {
            kernels.dequantizePairs(src.buffer(), src.elementIndex(0), count, reciprocal, floats, 0);
            dst.put(at, floats, 0, count);
        }
    }

    /** Writes {@code src[from, to)} as raw float32 bit patterns into the payload (the one-round mode). */
    public void copyRaw(FloatBuffer src, int from, int to, AggregationPacket dst) {
        int n = to - from;
        if (src.hasArray()) {
            kernels.storeFloatBits(src.array(), src.arrayOffset() + from, n, dst.buffer(), dst.elementIndex(0));
        } else {
            src.get(from, floats, 0, n);
            kernels.storeFloatBits(floats, 0, n, dst.buffer(), dst.elementIndex(0));
        }
    }

    /** Writes {@code count} dequantized payload elements, {@code sum / divisor}, to {@code dst[at, at + count)}. */
    public void dequantize(AggregationPacket src, int count, double divisor, FloatBuffer dst, int at) {
        double reciprocal = 1.0 / divisor;
        ByteBuffer packet = src.buffer();
        if (dst.hasArray()) {
            kernels.dequantize(packet, src.elementIndex(0), count, reciprocal, dst.array(), dst.arrayOffset() + at);
        } else {
            kernels.dequantize(packet, src.elementIndex(0), count, reciprocal, floats, 0);
            dst.put(at, floats, 0, count);
        }
    }

    /** Writes {@code src[from, to)} as they are into the packet's payload, zero-padded to {@code elements}. */
    public void encode(IntBuffer src, int from, int to, AggregationPacket dst, int elements) {
        int n = to - from;
        if (src.hasArray()) {
            kernels.storeInts(src.array(), src.arrayOffset() + from, n, dst.buffer(), dst.elementIndex(0));
        } else {
            src.get(from, ints, 0, n);
            kernels.storeInts(ints, 0, n, dst.buffer(), dst.elementIndex(0));
        }
        zeroFill(dst, n, elements);
    }

    /** Writes {@code count} payload sums, divided by {@code divisor} (1 for SUM), to {@code dst[at, at + count)}. */
    public void decode(AggregationPacket src, int count, int divisor, IntBuffer dst, int at) {
        int[] sums = ints;
        kernels.loadInts(src.buffer(), src.elementIndex(0), count, sums, 0);
        if (divisor != 1) {
            for (int i = 0; i < count; i++) {
                sums[i] /= divisor;
            }
        }
        dst.put(at, sums, 0, count);
    }

    /** Writes {@code count} values +0.0 to {@code dst[at, at + count)}. */
    public void writeZeros(FloatBuffer dst, int at, int count) {
        if (dst.hasArray()) {
            Arrays.fill(dst.array(), dst.arrayOffset() + at, dst.arrayOffset() + at + count, 0f);
            return;
        }
        Arrays.fill(floats, 0, Math.min(floats.length, count), 0f); // as much scratch as one bulk copy takes
        for (int done = 0; done < count; done += floats.length) {
            dst.put(at + done, floats, 0, Math.min(floats.length, count - done));
        }
    }

    /** Zeroes the first {@code elements} payload elements. */
    public void zeroFill(AggregationPacket dst, int elements) {
        zeroFill(dst, 0, elements);
    }

    private void zeroFill(AggregationPacket dst, int from, int to) {
        if (to > from) {
            kernels.zero(dst.buffer(), dst.elementIndex(from), to - from);
        }
    }
}
