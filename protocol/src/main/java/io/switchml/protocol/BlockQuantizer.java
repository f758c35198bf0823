package io.switchml.protocol;

import java.nio.FloatBuffer;

/**
 * Block floating point, as SwitchML sends float32 through an integer switch.
 *
 * <p>For each block the worker finds {@code e} with {@code 2^e > max|x|} (the float's biased
 * exponent field of max|x| minus 126) and sends it one window ahead of the block's values. The
 * switch returns the maximum over the workers, so every worker scales the block with the same
 * factor {@code f = floor((2^31 - 1) / n) / 2^eMax}, sends {@code round(x * f)} and divides the
 * integer sum by {@code f}. Each of the n terms is at most {@code floor((2^31 - 1) / n)} in
 * magnitude, so the sum never overflows, and integer sums do not depend on arrival order: every
 * worker gets bit-identical results.
 *
 * <p>Defined edge cases:
 * <ul>
 *   <li>An all-zero block (and a block of subnormals) has exponent {@link #MIN_EXPONENT}; zeros
 *       come back as exactly +0.0.</li>
 *   <li>A block holding NaN, an infinity or a finite value with {@code |x| >= 2^127} cannot be
 *       carried: its worker raises {@link #FLAG_UNREPRESENTABLE} in exponent e1 (the switch keeps
 *       the maximum of e1 too), every worker learns it with the block's maximum exponent, sends
 *       zeros for that block, writes NaN for its elements, and fails the all-reduce with an error.
 *       No silently wrong finite number is ever returned.</li>
 * </ul>
 */
public final class BlockQuantizer {
    /** Exponent of an all-zero or subnormal block: 2^-126 exceeds every subnormal. */
    public static final int MIN_EXPONENT = -126;
    /** Largest exponent a representable block can have (|x| < 2^127). */
    public static final int MAX_EXPONENT = 127;
    /** Value of e1 when the block holds a value the fixed-point format cannot carry. */
    public static final int FLAG_UNREPRESENTABLE = 1;
    /** Value of e1 for an ordinary block. */
    public static final int FLAG_NONE = 0;
    /**
     * Value of e1 for a block whose every element is +0.0 or -0.0, in a job that skips zero blocks
     * (docs/ARCHITECTURE.md section 14). It is below {@link #FLAG_NONE}, so the switch's maximum is
     * {@code FLAG_ZERO} exactly when the block is zero at every worker; one non-zero block anywhere,
     * or an unrepresentable one, outranks it.
     */
    public static final int FLAG_ZERO = -1;
    /**
     * The most blocks ahead that the packet standing in for a block zero at every worker reports on
     * (docs/ARCHITECTURE.md section 14): one element per block, 1 where this worker's block holds a
     * value, so the switch's sum is 0 exactly for the blocks zero everywhere. 256 bytes of payload.
     */
    public static final int ZERO_LOOKAHEAD_BLOCKS = 64;

    /** |bits| at or above this are NaN, infinities or finite values with |x| >= 2^127. */
    private static final int FIRST_UNREPRESENTABLE_BITS = 0x7F000000;

    private BlockQuantizer() {
    }

    /**
     * The largest of the magnitudes' bit patterns in {@code src[from, to)}. Positive floats order
     * like their bit patterns, and NaN and infinity sort above every finite value.
     */
    public static int maxMagnitudeBits(FloatBuffer src, int from, int to) {
        if (src.hasArray()) {
            return maxMagnitudeBits(src.array(), src.arrayOffset() + from, src.arrayOffset() + to);
        }
        int max = 0;
        for (int i = from; i < to; i++) {
            int bits = Float.floatToRawIntBits(src.get(i)) & 0x7FFFFFFF;
            if (bits > max) {
                max = bits;
            }
        }
        return max;
    }

    /**
     * {@link #maxMagnitudeBits(FloatBuffer, int, int)} over an array. (Written with {@code if}: C2
     * compiles this form to a loop 2.5x faster than one with {@code Math.max}.)
     */
    public static int maxMagnitudeBits(float[] src, int from, int to) {
        int max = 0;
        for (int i = from; i < to; i++) {
            int bits = Float.floatToRawIntBits(src[i]) & 0x7FFFFFFF;
            if (bits > max) {
                max = bits;
            }
        }
        return max;
    }

    /** True when a block whose largest magnitude has these bits can be sent as fixed point. */
    public static boolean representable(int maxMagnitudeBits) {
        return maxMagnitudeBits < FIRST_UNREPRESENTABLE_BITS;
    }

    /**
     * The block exponent: the smallest e with 2^e > max|x|, at least {@link #MIN_EXPONENT}. An
     * unrepresentable block reports {@link #MAX_EXPONENT}; its e1 flag is what tells the others.
     */
    public static int exponent(int maxMagnitudeBits) {
        if (!representable(maxMagnitudeBits)) {
            return MAX_EXPONENT;
        }
        int biased = maxMagnitudeBits >>> 23;
        return Math.max(biased - 126, MIN_EXPONENT);
    }

    /** The e1 flag for a block whose largest magnitude has these bits. */
    public static int flag(int maxMagnitudeBits) {
        return representable(maxMagnitudeBits) ? FLAG_NONE : FLAG_UNREPRESENTABLE;
    }

    /** The e1 flag, with {@link #FLAG_ZERO} for an all-zero block when the job skips zero blocks. */
    public static int flag(int maxMagnitudeBits, boolean skipZeroBlocks) {
        return skipZeroBlocks && maxMagnitudeBits == 0 ? FLAG_ZERO : flag(maxMagnitudeBits);
    }

    /** The largest magnitude one of n workers may send: floor((2^31 - 1) / n). */
    public static int maxTerm(int workers) {
        checkWorkers(workers);
        return Integer.MAX_VALUE / workers;
    }

    /** The factor f that maps a block with maximum exponent {@code eMax} to integers. */
    public static double scale(int eMax, int workers) {
        if (eMax < MIN_EXPONENT || eMax > MAX_EXPONENT) {
            throw new IllegalArgumentException("exponent " + eMax + " outside " + MIN_EXPONENT + ".." + MAX_EXPONENT);
        }
        return Math.scalb((double) maxTerm(workers), -eMax);
    }

    /** 1.5 x 2^52: adding it to |d| < 2^51 rounds d to an integer (half to even) held in the low bits. */
    private static final double ROUNDING_BIAS = 0x1.8p52;

    /**
     * round(x * f), half to even; |result| <= maxTerm(n) for every x with |x| < 2^eMax. The
     * rounding is done by adding {@link #ROUNDING_BIAS}, which the JIT keeps in vector registers
     * where {@code Math.rint} and a saturating cast would not be; for |x * f| < 2^31 it equals
     * {@code (int) Math.rint(x * f)}.
     */
    public static int quantize(float x, double scale) {
        return (int) Double.doubleToRawLongBits(x * scale + ROUNDING_BIAS);
    }

    /**
     * {@link #quantize(float, double)} rounded by {@code Math.rint}: the same int for every x with
     * |x * f| < 2^31, which is every value a worker quantises (the agreed exponent bounds its block;
     * a block that cannot be carried is sent as zeros, never quantised). Outside that range (NaN, the
     * infinities) the cast saturates where {@code quantize} keeps the low bits. JDK 21 and later
     * compile a loop of these to vector rounds and conversions, about twice as fast as the bias's
     * loop; JDK 17 keeps it scalar, slower than the bias (docs/ARCHITECTURE.md section 13).
     */
    public static int quantizeInRange(float x, double scale) {
        return (int) Math.rint(x * scale);
    }

    /** The float nearest to {@code sum / divisor}, as {@code sum * (1 / divisor)}; MEAN passes {@code scale * n}. */
    public static float dequantize(int sum, double divisor) {
        return dequantizeByReciprocal(sum, 1.0 / divisor);
    }

    /** {@link #dequantize(int, double)} with the divisor's reciprocal computed once per block. */
    public static float dequantizeByReciprocal(int sum, double reciprocal) {
        return (float) (sum * reciprocal);
    }

    private static void checkWorkers(int workers) {
        if (workers < 1 || workers > ProtocolConstants.MAX_WORKERS) {
            throw new IllegalArgumentException("workers " + workers + " outside 1.." + ProtocolConstants.MAX_WORKERS);
        }
    }
}
