package io.switchml.protocol.kernels;

import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.SixteenBitLanes;

import java.nio.ByteBuffer;

/**
 * Every pass over a payload's elements (docs/ARCHITECTURE.md section 13): the worker's block maximum,
 * quantisation, raw stores, dequantisation and loads, and the switch's copy-in, add-in and copy-out.
 * Payload elements are big-endian int32 at a byte index of a {@link ByteBuffer} of any kind (heap,
 * direct, mapped, a slice; read-only where only read).
 *
 * <p>{@link ScalarKernels} is the reference; every other implementation writes the same bytes and
 * values for the same inputs (the contract test checks it), so choosing one never changes a result.
 * An instance holds the scratch of one packet and belongs to one thread; {@link Kernels} makes them.
 */
public interface PayloadKernels {
    /** The implementation's name, as the {@code kernels} setting spells it. */
    String name();

    /** The largest magnitude bit pattern in {@code src[from, to)} (see {@code BlockQuantizer.maxMagnitudeBits}). */
    int maxMagnitudeBits(float[] src, int from, int to);

    /**
     * Writes {@code round(src[from + i] * scale)}, half to even, as payload element i at byte {@code at}, i < n.
     * Defined for values with |src[from + i] * scale| < 2^31: every value of a block at its agreed exponent.
     * Others (NaN, the infinities, 2^127 and above) belong to blocks that are sent as zeros and are never
     * quantised; what an implementation writes for them may differ from the reference's.
     */
    void quantize(float[] src, int from, int n, double scale, ByteBuffer dst, int at);

    /** Writes {@code src[from + i]}'s raw float32 bits as element i at byte {@code at}, i < n (the one-round mode). */
    void storeFloatBits(float[] src, int from, int n, ByteBuffer dst, int at);

    /** Writes {@code src[from + i]} as element i at byte {@code at}, i < n. */
    void storeInts(int[] src, int from, int n, ByteBuffer dst, int at);

    /** Writes n zero elements at byte {@code at}. */
    void zero(ByteBuffer dst, int at, int n);

    /** Writes {@code (float) (element i * reciprocal)} to {@code dst[to + i]}, i < n. */
    void dequantize(ByteBuffer src, int at, int n, double reciprocal, float[] dst, int to);

    /** Reads n elements at byte {@code at} into {@code dst[to, to + n)}. */
    void loadInts(ByteBuffer src, int at, int n, int[] dst, int to);

    /** Adds n elements at byte {@code at} to {@code sums[0, n)}, wrapping on overflow as 32-bit registers do. */
    void addInts(ByteBuffer src, int at, int n, int[] sums);

    /**
     * Reads n elements (raw float32 bits) at byte {@code at} into {@code dst[to, to + n)} and returns the
     * largest of their magnitudes' bit patterns and {@code maxSoFar}: the one-round mode's staging.
     */
    int loadFloatBits(ByteBuffer src, int at, int n, int[] dst, int to, int maxSoFar);

    /**
     * {@code sums[i] (+)= round(intBitsToFloat(bits[from + i]) * scale)}, i < n: overwriting when
     * {@code first}, else adding; the one-round mode's quantised sum of staged contributions.
     */
    void quantizeBits(int[] bits, int from, int n, double scale, int[] sums, boolean first);

    /**
     * 16-bit lanes ({@link SixteenBitLanes}): writes {@code round(src[from + 2j] * scale)} and
     * {@code round(src[from + 2j + 1] * scale)} packed as payload element j at byte {@code at}, for the
     * n values (an odd last one pairs with 0). One implementation for all: the pass is rare and the
     * packing is the same arithmetic everywhere.
     */
    default void quantizePairs(float[] src, int from, int n, double scale, ByteBuffer dst, int at) {
        for (int i = 0; i < n; i += 2) {
            int first = BlockQuantizer.quantize(src[from + i], scale);
            int second = i + 1 < n ? BlockQuantizer.quantize(src[from + i + 1], scale) : 0;
            dst.putInt(at + i / 2 * Integer.BYTES, SixteenBitLanes.pack(first, second));
        }
    }

    /** 16-bit lanes: writes each lane sum of the elements at byte {@code at}, times {@code reciprocal}, to {@code dst[to + i]}, i < n values. */
    default void dequantizePairs(ByteBuffer src, int at, int n, double reciprocal, float[] dst, int to) {
        for (int i = 0; i < n; i += 2) {
            int element = src.getInt(at + i / 2 * Integer.BYTES);
            dst[to + i] = BlockQuantizer.dequantizeByReciprocal(SixteenBitLanes.first(element), reciprocal);
            if (i + 1 < n) {
                dst[to + i + 1] = BlockQuantizer.dequantizeByReciprocal(SixteenBitLanes.second(element), reciprocal);
            }
        }
    }
}
