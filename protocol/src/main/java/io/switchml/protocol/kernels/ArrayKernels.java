package io.switchml.protocol.kernels;

import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.SixteenBitLanes;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Kernels for any JDK from 17: each packet crosses between its {@link ByteBuffer} and a byte array of
 * this instance in one bulk copy, and the element loops run over arrays only. A loop of per-element
 * buffer calls is fast only while the JVM has seen one kind of buffer at that call; a real process
 * sees several (heap, direct, mapped, read-only), the calls stop being inlined and the loops run 4-8x
 * slower (docs/ARCHITECTURE.md section 13). The byte array's accesses are one kind, always inlined.
 */
public final class ArrayKernels implements PayloadKernels {
    public static final String NAME = "array";
    private static final VarHandle BIG_ENDIAN_INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    /** The first JDK whose C2 vectorises {@link BlockQuantizer#quantizeInRange}'s rounding and cast. */
    static final int FIRST_JDK_ROUNDING_BY_RINT = 21;

    private final byte[] bytes;
    private final boolean roundByRint;

    /** Kernels for packets of at most {@code maxElements} elements, quantising as this JDK does fastest. */
    public ArrayKernels(int maxElements) {
        this(maxElements, Runtime.version().feature() >= FIRST_JDK_ROUNDING_BY_RINT);
    }

    /**
     * @param roundByRint quantise with {@link BlockQuantizer#quantizeInRange} (vectorised from JDK 21),
     *                    else with {@link BlockQuantizer#quantize} (faster on JDK 17); equal on every value
     *                    a worker quantises
     */
    ArrayKernels(int maxElements, boolean roundByRint) {
        this.bytes = new byte[maxElements * Integer.BYTES];
        this.roundByRint = roundByRint;
    }

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
        if (roundByRint) {
            quantizeByRint(src, from, n, scale);
        } else {
            quantizeByBias(src, from, n, scale);
        }
        dst.put(at, bytes, 0, n * Integer.BYTES);
    }

    // Two loops, one per rounding, each in its own method so that C2 compiles each alone.
    private void quantizeByRint(float[] src, int from, int n, double scale) {
        byte[] b = bytes;
        for (int i = 0; i < n; i++) {
            BIG_ENDIAN_INT.set(b, i * Integer.BYTES, BlockQuantizer.quantizeInRange(src[from + i], scale));
        }
    }

    private void quantizeByBias(float[] src, int from, int n, double scale) {
        byte[] b = bytes;
        for (int i = 0; i < n; i++) {
            BIG_ENDIAN_INT.set(b, i * Integer.BYTES, BlockQuantizer.quantize(src[from + i], scale));
        }
    }

    @Override
    public void storeFloatBits(float[] src, int from, int n, ByteBuffer dst, int at) {
        byte[] b = bytes;
        for (int i = 0; i < n; i++) {
            BIG_ENDIAN_INT.set(b, i * Integer.BYTES, Float.floatToRawIntBits(src[from + i]));
        }
        dst.put(at, b, 0, n * Integer.BYTES);
    }

    @Override
    public void storeInts(int[] src, int from, int n, ByteBuffer dst, int at) {
        byte[] b = bytes;
        for (int i = 0; i < n; i++) {
            BIG_ENDIAN_INT.set(b, i * Integer.BYTES, src[from + i]);
        }
        dst.put(at, b, 0, n * Integer.BYTES);
    }

    @Override
    public void zero(ByteBuffer dst, int at, int n) {
        Arrays.fill(bytes, 0, n * Integer.BYTES, (byte) 0);
        dst.put(at, bytes, 0, n * Integer.BYTES);
    }

    @Override
    public void dequantize(ByteBuffer src, int at, int n, double reciprocal, float[] dst, int to) {
        byte[] b = load(src, at, n);
        for (int i = 0; i < n; i++) {
            dst[to + i] = BlockQuantizer.dequantizeByReciprocal((int) BIG_ENDIAN_INT.get(b, i * Integer.BYTES), reciprocal);
        }
    }

    @Override
    public void loadInts(ByteBuffer src, int at, int n, int[] dst, int to) {
        byte[] b = load(src, at, n);
        for (int i = 0; i < n; i++) {
            dst[to + i] = (int) BIG_ENDIAN_INT.get(b, i * Integer.BYTES);
        }
    }

    @Override
    public void addInts(ByteBuffer src, int at, int n, int[] sums) {
        byte[] b = load(src, at, n);
        for (int i = 0; i < n; i++) {
            sums[i] += (int) BIG_ENDIAN_INT.get(b, i * Integer.BYTES);
        }
    }

    @Override
    public int loadFloatBits(ByteBuffer src, int at, int n, int[] dst, int to, int maxSoFar) {
        byte[] b = load(src, at, n);
        int max = maxSoFar;
        for (int i = 0; i < n; i++) {
            int bits = (int) BIG_ENDIAN_INT.get(b, i * Integer.BYTES);
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
        ScalarKernels.quantizeBitsLoop(bits, from, n, scale, sums, first);
    }

    @Override
    public void quantizePairs(float[] src, int from, int n, double scale, ByteBuffer dst, int at) {
        byte[] b = bytes;
        int pairs = n / 2;
        for (int j = 0; j < pairs; j++) {
            int first = BlockQuantizer.quantize(src[from + 2 * j], scale);
            int second = BlockQuantizer.quantize(src[from + 2 * j + 1], scale);
            BIG_ENDIAN_INT.set(b, j * Integer.BYTES, SixteenBitLanes.pack(first, second));
        }
        int elements = SixteenBitLanes.elementsFor(n);
        if (elements > pairs) { // an odd last value pairs with 0
            BIG_ENDIAN_INT.set(b, pairs * Integer.BYTES, SixteenBitLanes.pack(BlockQuantizer.quantize(src[from + n - 1], scale), 0));
        }
        dst.put(at, b, 0, elements * Integer.BYTES);
    }

    @Override
    public void dequantizePairs(ByteBuffer src, int at, int n, double reciprocal, float[] dst, int to) {
        int elements = SixteenBitLanes.elementsFor(n);
        byte[] b = load(src, at, elements);
        int pairs = n / 2;
        for (int j = 0; j < pairs; j++) {
            int element = (int) BIG_ENDIAN_INT.get(b, j * Integer.BYTES);
            dst[to + 2 * j] = BlockQuantizer.dequantizeByReciprocal(SixteenBitLanes.first(element), reciprocal);
            dst[to + 2 * j + 1] = BlockQuantizer.dequantizeByReciprocal(SixteenBitLanes.second(element), reciprocal);
        }
        if (elements > pairs) {
            int element = (int) BIG_ENDIAN_INT.get(b, pairs * Integer.BYTES);
            dst[to + n - 1] = BlockQuantizer.dequantizeByReciprocal(SixteenBitLanes.first(element), reciprocal);
        }
    }

    private byte[] load(ByteBuffer src, int at, int n) {
        src.get(at, bytes, 0, n * Integer.BYTES);
        return bytes;
    }
}
