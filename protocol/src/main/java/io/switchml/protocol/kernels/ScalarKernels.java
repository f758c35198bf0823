package io.switchml.protocol.kernels;

import io.switchml.protocol.BlockQuantizer;
import java.nio.ByteBuffer;

/**
 * The reference kernels: one absolute {@link ByteBuffer} access per element, the loops this project
 * had before it had kernels. Every other implementation must match them byte for byte. Slow where a
 * JVM has seen several kinds of buffer (its per-element calls stop being inlined), so only for
 * checking and comparing ({@code kernels=scalar}).
 */
public final class ScalarKernels implements PayloadKernels {
    public static final String NAME = "scalar";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int maxMagnitudeBits(float[] src, int from, int to) {
        return BlockQuantizer.maxMagnitudeBits(src, from, to);
    }

    @Override
    public void quantize(float[] src, int from, int n, double scale, ByteBuffer dst, int at) {
        for (int i = 0; i < n; i++) {
            dst.putInt(at + i * Integer.BYTES, BlockQuantizer.quantize(src[from + i], scale));
        }
    }

    @Override
    public void storeFloatBits(float[] src, int from, int n, ByteBuffer dst, int at) {
        for (int i = 0; i < n; i++) {
            dst.putInt(at + i * Integer.BYTES, Float.floatToRawIntBits(src[from + i]));
        }
    }

    @Override
    public void storeInts(int[] src, int from, int n, ByteBuffer dst, int at) {
        for (int i = 0; i < n; i++) {
            dst.putInt(at + i * Integer.BYTES, src[from + i]);
        }
    }

    @Override
    public void zero(ByteBuffer dst, int at, int n) {
        for (int i = 0; i < n; i++) {
            dst.putInt(at + i * Integer.BYTES, 0);
        }
    }

    @Override
    public void dequantize(ByteBuffer src, int at, int n, double reciprocal, float[] dst, int to) {
        for (int i = 0; i < n; i++) {
            dst[to + i] = BlockQuantizer.dequantizeByReciprocal(src.getInt(at + i * Integer.BYTES), reciprocal);
        }
    }

    @Override
    public void loadInts(ByteBuffer src, int at, int n, int[] dst, int to) {
        for (int i = 0; i < n; i++) {
            dst[to + i] = src.getInt(at + i * Integer.BYTES);
        }
    }

    @Override
    public void addInts(ByteBuffer src, int at, int n, int[] sums) {
        for (int i = 0; i < n; i++) {
            sums[i] += src.getInt(at + i * Integer.BYTES);
        }
    }

    @Override
    public int loadFloatBits(ByteBuffer src, int at, int n, int[] dst, int to, int maxSoFar) {
        int max = maxSoFar;
        for (int i = 0; i < n; i++) {
            int bits = src.getInt(at + i * Integer.BYTES);
            dst[to + i] = bits;
            int magnitude = bits & 0x7FFFFFFF;
            if (magnitude > max) {
                max = magnitude;
            }
        }
        return max;
    }

    @Override
    public void quantizeBits(int[] bits, int from, int n, double scale, int[] sums, boolean first) {
        quantizeBitsLoop(bits, from, n, scale, sums, first);
    }

    /** The one-round sum's loop, over arrays only: {@link ArrayKernels} runs it too. */
    static void quantizeBitsLoop(int[] bits, int from, int n, double scale, int[] sums, boolean first) {
        if (first) {
            for (int i = 0; i < n; i++) {
                sums[i] = BlockQuantizer.quantize(Float.intBitsToFloat(bits[from + i]), scale);
            }
        } else {
            for (int i = 0; i < n; i++) {
                sums[i] += BlockQuantizer.quantize(Float.intBitsToFloat(bits[from + i]), scale);
            }
        }
    }
}
