package io.switchml.protocol;

/**
 * 16-bit lanes (docs/ARCHITECTURE.md section 15): two float32 values per int32 payload element, each
 * quantized to a 16-bit term with the block's shared exponent, so a block carries twice the values
 * in the same bytes. The switch adds the int32 elements as it always does: with every term at most
 * {@code floor((2^15 - 1) / n)} in magnitude, each lane's n-way sum fits 16 signed bits, so the
 * int32 sum of the packed elements is the packed pair of the lane sums and unpacks exactly. No switch
 * change; results stay bit-identical on every worker and equal to {@code ReferenceAllReduce}'s.
 *
 * <p>Element j of a block holds values 2j and 2j + 1 as {@code first * 2^16 + second} (an addition,
 * so a negative second lane borrows from the first, and unpacking undoes it); a block's odd last
 * value pairs with 0.
 */
public final class SixteenBitLanes {
    /** The most workers a 16-bit job may have: with 128, a term keeps 8 bits, bfloat16's precision. */
    public static final int MAX_WORKERS = 128;

    private SixteenBitLanes() {
    }

    /** The largest magnitude one of n workers may send in a lane: floor((2^15 - 1) / n). */
    public static int maxTerm(int workers) {
        if (workers < 1 || workers > MAX_WORKERS) {
            throw new IllegalArgumentException("16-bit lanes take 1.." + MAX_WORKERS + " workers, not " + workers
                    + ": beyond, a term keeps fewer than 8 bits, worse than bfloat16");
        }
        return Short.MAX_VALUE / workers;
    }

    /** Bits of the largest term's magnitude (the block maximum's precision): 14 at n = 2, 8 at n = 128. */
    public static int significantBits(int workers) {
        return 32 - Integer.numberOfLeadingZeros(maxTerm(workers));
    }

    /** The factor that maps a block with maximum exponent {@code eMax} to 16-bit terms. */
    public static double scale(int eMax, int workers) {
        if (eMax < BlockQuantizer.MIN_EXPONENT || eMax > BlockQuantizer.MAX_EXPONENT) {
            throw new IllegalArgumentException("exponent " + eMax + " outside " + BlockQuantizer.MIN_EXPONENT + ".."
                    + BlockQuantizer.MAX_EXPONENT);
        }
        return Math.scalb((double) maxTerm(workers), -eMax);
    }

    /** The payload elements that carry {@code values} values. */
    public static int elementsFor(int values) {
        return (values + 1) / 2;
    }

    /** One element holding two lane terms (or lane sums that fit 16 signed bits). */
    public static int pack(int first, int second) {
        return (first << 16) + second;
    }

    /** The first lane of an element made by {@link #pack} (or a sum of such elements whose lane sums fit). */
    public static int first(int element) {
        return (element - second(element)) >> 16;
    }

    /** The second lane of such an element. */
    public static int second(int element) {
        return (short) element;
    }
}
