package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;

import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class BlockQuantizerTest {

    private static final int FIRST_UNREPRESENTABLE_BITS = 0x7F000000; // 2^127
    private static final float JUST_BELOW_2_127 = Float.intBitsToFloat(0x7EFFFFFF);
    private static final float LARGEST_SUBNORMAL = Float.intBitsToFloat(0x007FFFFF);

    // ------------------------------------------------------------------ helpers

    private static FloatBuffer floats(float... values) {
        return FloatBuffer.wrap(values);
    }

    private static int exponentOf(float... block) {
        return BlockQuantizer.exponent(BlockQuantizer.maxMagnitudeBits(floats(block), 0, block.length));
    }

    private static int flagOf(float... block) {
        return BlockQuantizer.flag(BlockQuantizer.maxMagnitudeBits(floats(block), 0, block.length));
    }

    /** 2^e as a double (exact for every e the quantizer uses). */
    private static double pow2(int e) {
        return Math.scalb(1.0, e);
    }

    /**
     * A random representable block: one of several shapes, so that the exponents of different
     * workers differ, blocks hit their own maximum, and zeros and subnormals appear.
     */
    /** n workers' random blocks of k elements (see {@link #randomBlock}). */
    private static float[][] randomBlocks(SplittableRandom rnd, int n, int k) {
        float[][] blocks = new float[n][];
        for (int w = 0; w < n; w++) {
            blocks[w] = randomBlock(rnd, k);
        }
        return blocks;
    }

    private static float[] randomBlock(SplittableRandom rnd, int k) {
        float[] x = new float[k];
        int shape = rnd.nextInt(6);
        // Largest biased exponent field of this block: 0 (subnormal) .. 253 (just below 2^127).
        int topField = rnd.nextInt(8) == 0 ? 253 - rnd.nextInt(3) : rnd.nextInt(254);
        for (int i = 0; i < k; i++) {
            int bits;
            switch (shape) {
                case 0: // uniform bit patterns below 2^127: every binade
                    bits = rnd.nextInt(FIRST_UNREPRESENTABLE_BITS);
                    break;
                case 1: // values within a few binades of the top
                    int field = Math.max(0, topField - rnd.nextInt(4));
                    bits = field << 23 | rnd.nextInt(1 << 23);
                    break;
                case 2: // every element the block maximum: just below 2^(e)
                    bits = topField << 23 | 0x7FFFFF;
                    break;
                case 3: // zeros and subnormals
                    bits = rnd.nextBoolean() ? 0 : rnd.nextInt(1 << 23);
                    break;
                case 4: // a sparse block: mostly zeros
                    bits = rnd.nextInt(4) == 0 ? (topField << 23 | rnd.nextInt(1 << 23)) : 0;
                    break;
                default: // values with all exponents up to the top one
                    bits = rnd.nextInt(topField + 1) << 23 | rnd.nextInt(1 << 23);
                    break;
            }
            int sign = shape == 2 ? 0 : (rnd.nextBoolean() ? 0x80000000 : 0);
            x[i] = Float.intBitsToFloat(bits | sign);
        }
        return x;
    }

    private static int[][] quantizeAll(float[][] blocks, double scale) {
        int[][] q = new int[blocks.length][];
        for (int w = 0; w < blocks.length; w++) {
            q[w] = new int[blocks[w].length];
            for (int i = 0; i < blocks[w].length; i++) {
                q[w][i] = BlockQuantizer.quantize(blocks[w][i], scale);
            }
        }
        return q;
    }

    private static int eMaxOf(float[][] blocks) {
        int eMax = Integer.MIN_VALUE;
        for (float[] b : blocks) {
            int bits = BlockQuantizer.maxMagnitudeBits(FloatBuffer.wrap(b), 0, b.length);
            assertThat(BlockQuantizer.representable(bits)).isTrue();
            assertThat(BlockQuantizer.flag(bits)).isEqualTo(BlockQuantizer.FLAG_NONE);
            eMax = Math.max(eMax, BlockQuantizer.exponent(bits));
        }
        return eMax;
    }

    // ------------------------------------------------------------------ the block exponent

    @Property(tries = 1000)
    void exponentIsTheSmallestPowerOfTwoAboveTheMaximum(
            @ForAll @IntRange(min = 0x00800000, max = FIRST_UNREPRESENTABLE_BITS - 1) int magnitude, // normal, < 2^127
            @ForAll boolean negative) {
        float x = Float.intBitsToFloat(magnitude | (negative ? 0x80000000 : 0));
        int e = exponentOf(x);
        double abs = Math.abs((double) x);
        assertThat(pow2(e)).isGreaterThan(abs);
        assertThat(pow2(e - 1)).isLessThanOrEqualTo(abs);
        assertThat(e).isBetween(BlockQuantizer.MIN_EXPONENT + 1, BlockQuantizer.MAX_EXPONENT);
        assertThat(e).isEqualTo(Math.getExponent(x) + 1);
        assertThat(flagOf(x)).isEqualTo(BlockQuantizer.FLAG_NONE);
    }

    @Property(tries = 500)
    void blockExponentFollowsTheLargestMagnitude(@ForAll long seed, @ForAll @IntRange(min = 1, max = 300) int k) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] block = randomBlock(rnd, k);
        double max = 0;
        for (float v : block) {
            max = Math.max(max, Math.abs((double) v));
        }
        int e = exponentOf(block);
        assertThat(pow2(e)).isGreaterThan(max);
        if (max >= Float.MIN_NORMAL) {
            assertThat(pow2(e - 1)).isLessThanOrEqualTo(max);
        } else {
            assertThat(e).isEqualTo(BlockQuantizer.MIN_EXPONENT);
        }
        // The exponent fits e0, a signed byte.
        assertThat(e).isBetween(-128, 127);
    }

    @Test
    void maxMagnitudeBitsLooksOnlyAtTheRange() {
        FloatBuffer src = floats(1e30f, -3f, 0.5f, -7.5f, 2f, Float.NaN);
        assertThat(BlockQuantizer.maxMagnitudeBits(src, 1, 5)).isEqualTo(Float.floatToIntBits(7.5f));
        assertThat(BlockQuantizer.exponent(BlockQuantizer.maxMagnitudeBits(src, 1, 5))).isEqualTo(3);
        assertThat(BlockQuantizer.maxMagnitudeBits(src, 2, 3)).isEqualTo(Float.floatToIntBits(0.5f));
        assertThat(BlockQuantizer.exponent(Float.floatToIntBits(0.5f))).isZero();
        assertThat(BlockQuantizer.maxMagnitudeBits(src, 3, 3)).isZero();
        // The whole buffer holds NaN: unrepresentable.
        assertThat(BlockQuantizer.representable(BlockQuantizer.maxMagnitudeBits(src, 0, 6))).isFalse();
    }

    @Test
    void exactPowersOfTwoGetTheNextExponent() {
        assertThat(exponentOf(1f)).isEqualTo(1);   // 2^1 > 1
        assertThat(exponentOf(-1f)).isEqualTo(1);
        assertThat(exponentOf(Math.nextDown(1f))).isZero();
        assertThat(exponentOf(0.75f)).isZero();
        assertThat(exponentOf(1024f)).isEqualTo(11);
        assertThat(exponentOf(Float.MIN_NORMAL)).isEqualTo(-125);
    }

    @Test
    void allZeroBlockHasTheMinimumExponentAndComesBackAsPositiveZero() {
        float[] zeros = {0f, -0f, 0f, -0f};
        int bits = BlockQuantizer.maxMagnitudeBits(floats(zeros), 0, zeros.length);
        assertThat(bits).isZero();
        assertThat(BlockQuantizer.exponent(bits)).isEqualTo(BlockQuantizer.MIN_EXPONENT);
        assertThat(BlockQuantizer.flag(bits)).isEqualTo(BlockQuantizer.FLAG_NONE);
        assertThat(BlockQuantizer.representable(bits)).isTrue();

        for (int n : new int[] {1, 2, 256}) {
            double scale = BlockQuantizer.scale(BlockQuantizer.MIN_EXPONENT, n);
            int sum = 0;
            for (int w = 0; w < n; w++) {
                for (float z : zeros) {
                    int q = BlockQuantizer.quantize(z, scale);
                    assertThat(q).isZero();
                    sum += q;
                }
            }
            float back = BlockQuantizer.dequantize(sum, scale);
            assertThat(Float.floatToRawIntBits(back)).as("+0.0").isZero();
            assertThat(Float.floatToRawIntBits(BlockQuantizer.dequantize(0, scale * n))).isZero();
        }
        // Also when the block's scale comes from another worker's larger exponent.
        assertThat(Float.floatToRawIntBits(BlockQuantizer.dequantize(
                BlockQuantizer.quantize(-0f, BlockQuantizer.scale(40, 3)), BlockQuantizer.scale(40, 3)))).isZero();
    }

    @Test
    void subnormalBlocksHaveTheMinimumExponentAndSurvive() {
        assertThat(exponentOf(Float.MIN_VALUE)).isEqualTo(BlockQuantizer.MIN_EXPONENT);
        assertThat(exponentOf(LARGEST_SUBNORMAL)).isEqualTo(BlockQuantizer.MIN_EXPONENT);
        assertThat(exponentOf(-LARGEST_SUBNORMAL, 0f, Float.MIN_VALUE)).isEqualTo(BlockQuantizer.MIN_EXPONENT);
        assertThat(flagOf(LARGEST_SUBNORMAL)).isEqualTo(BlockQuantizer.FLAG_NONE);
        assertThat(pow2(BlockQuantizer.MIN_EXPONENT)).isGreaterThan(LARGEST_SUBNORMAL);

        // A single worker's subnormals come back within half a quantization step.
        double scale = BlockQuantizer.scale(BlockQuantizer.MIN_EXPONENT, 1);
        for (float x : new float[] {LARGEST_SUBNORMAL, -LARGEST_SUBNORMAL, Float.MIN_VALUE, 1e-40f}) {
            int q = BlockQuantizer.quantize(x, scale);
            assertThat(Math.abs(q)).isLessThanOrEqualTo(BlockQuantizer.maxTerm(1));
            float back = BlockQuantizer.dequantize(q, scale);
            assertThat(Math.abs((double) back - x)).isLessThanOrEqualTo(0.5 / scale + Math.ulp(back));
        }
        // The largest subnormal is just below 2^-126: it uses (1 - 2^-23) of the range.
        assertThat(BlockQuantizer.quantize(LARGEST_SUBNORMAL, scale))
                .isBetween(BlockQuantizer.maxTerm(1) - 256, BlockQuantizer.maxTerm(1));
    }

    @Test
    void nanInfinityAndValuesFromTwoToThe127AreUnrepresentable() {
        float[] bad = {Float.NaN, -Float.NaN, Float.intBitsToFloat(0x7FC00001), Float.intBitsToFloat(0xFF800001),
                Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MAX_VALUE, -Float.MAX_VALUE,
                0x1p127f, -0x1p127f, Math.nextUp(0x1p127f)};
        for (float x : bad) {
            int bits = BlockQuantizer.maxMagnitudeBits(floats(1f, x, -2f), 0, 3);
            assertThat(BlockQuantizer.representable(bits)).as("%s", x).isFalse();
            assertThat(BlockQuantizer.flag(bits)).as("%s", x).isEqualTo(BlockQuantizer.FLAG_UNREPRESENTABLE);
            assertThat(BlockQuantizer.exponent(bits)).as("%s", x).isEqualTo(BlockQuantizer.MAX_EXPONENT);
        }
        assertThat(Float.floatToIntBits(0x1p127f)).isEqualTo(FIRST_UNREPRESENTABLE_BITS);
        // One bad value anywhere in the block spoils it.
        assertThat(flagOf(0f, 0f, 0f, Float.NaN)).isEqualTo(BlockQuantizer.FLAG_UNREPRESENTABLE);
        assertThat(flagOf(Float.NEGATIVE_INFINITY, 0f)).isEqualTo(BlockQuantizer.FLAG_UNREPRESENTABLE);
        // The flags fit e1 and the switch's max keeps "unrepresentable".
        assertThat(Math.max(BlockQuantizer.FLAG_NONE, BlockQuantizer.FLAG_UNREPRESENTABLE))
                .isEqualTo(BlockQuantizer.FLAG_UNREPRESENTABLE);
    }

    @Property(tries = 500)
    void everyBitPatternFromTwoToThe127UpIsUnrepresentable(@ForAll int bits) {
        int magnitude = bits & 0x7FFFFFFF;
        float x = Float.intBitsToFloat(bits);
        boolean expected = magnitude < FIRST_UNREPRESENTABLE_BITS;
        assertThat(expected).isEqualTo(Float.isFinite(x) && Math.abs((double) x) < pow2(127));
        int maxBits = BlockQuantizer.maxMagnitudeBits(floats(x), 0, 1);
        assertThat(BlockQuantizer.representable(maxBits)).isEqualTo(expected);
        assertThat(BlockQuantizer.flag(maxBits))
                .isEqualTo(expected ? BlockQuantizer.FLAG_NONE : BlockQuantizer.FLAG_UNREPRESENTABLE);
    }

    @Test
    void theLargestFloatBelowTwoToThe127IsRepresentable() {
        assertThat(JUST_BELOW_2_127).isEqualTo(Math.nextDown(0x1p127f));
        assertThat(flagOf(JUST_BELOW_2_127)).isEqualTo(BlockQuantizer.FLAG_NONE);
        assertThat(exponentOf(JUST_BELOW_2_127)).isEqualTo(127).isEqualTo(BlockQuantizer.MAX_EXPONENT);
        assertThat(exponentOf(-JUST_BELOW_2_127)).isEqualTo(127);

        for (int n : new int[] {1, 2, 3, 255, 256}) {
            double scale = BlockQuantizer.scale(127, n);
            int q = BlockQuantizer.quantize(JUST_BELOW_2_127, scale);
            assertThat(q).isPositive().isLessThanOrEqualTo(BlockQuantizer.maxTerm(n));
            assertThat(BlockQuantizer.quantize(-JUST_BELOW_2_127, scale)).isEqualTo(-q);
            // A single worker gets it back exactly to float precision.
            float back = BlockQuantizer.dequantize(q, scale);
            assertThat(Math.abs((double) back - JUST_BELOW_2_127)).isLessThanOrEqualTo(0.5 / scale + Math.ulp(JUST_BELOW_2_127));
        }
    }

    // ------------------------------------------------------------------ scale and maxTerm

    @Test
    void maxTermAndScale() {
        assertThat(BlockQuantizer.maxTerm(1)).isEqualTo(Integer.MAX_VALUE);
        assertThat(BlockQuantizer.maxTerm(2)).isEqualTo(1073741823);
        assertThat(BlockQuantizer.maxTerm(256)).isEqualTo(8388607);
        for (int n = 1; n <= ProtocolConstants.MAX_WORKERS; n++) {
            assertThat((long) n * BlockQuantizer.maxTerm(n)).isLessThanOrEqualTo(Integer.MAX_VALUE);
            assertThat((long) n * (BlockQuantizer.maxTerm(n) + 1L)).isGreaterThan(Integer.MAX_VALUE);
        }
        assertThat(BlockQuantizer.scale(0, 1)).isEqualTo((double) Integer.MAX_VALUE);
        assertThat(BlockQuantizer.scale(3, 2)).isEqualTo(1073741823 / 8.0);
        assertThat(BlockQuantizer.scale(-126, 256)).isEqualTo(8388607 * 0x1p126);
        assertThat(BlockQuantizer.scale(127, 256)).isEqualTo(8388607 * 0x1p-127);
    }

    @Test
    void outOfRangeArgumentsAreRejected() {
        for (int n : new int[] {0, -1, ProtocolConstants.MAX_WORKERS + 1}) {
            assertThatThrownBy(() -> BlockQuantizer.maxTerm(n))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1..256");
            assertThatThrownBy(() -> BlockQuantizer.scale(0, n)).isInstanceOf(IllegalArgumentException.class);
        }
        for (int e : new int[] {BlockQuantizer.MIN_EXPONENT - 1, BlockQuantizer.MAX_EXPONENT + 1, -128}) {
            assertThatThrownBy(() -> BlockQuantizer.scale(e, 4))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-126..127");
        }
    }

    @Test
    void roundingIsHalfToEven() {
        assertThat(BlockQuantizer.quantize(0.5f, 1.0)).isZero();
        assertThat(BlockQuantizer.quantize(1.5f, 1.0)).isEqualTo(2);
        assertThat(BlockQuantizer.quantize(2.5f, 1.0)).isEqualTo(2);
        assertThat(BlockQuantizer.quantize(-0.5f, 1.0)).isZero();
        assertThat(BlockQuantizer.quantize(-1.5f, 1.0)).isEqualTo(-2);
        assertThat(BlockQuantizer.quantize(0.7f, 1.0)).isOne();
        assertThat(BlockQuantizer.quantize(-0.7f, 1.0)).isEqualTo(-1);
        assertThat(BlockQuantizer.quantize(3f, 0.25)).isEqualTo(1); // 0.75
    }

    // ------------------------------------------------------------------ no overflow

    /**
     * n workers each quantize a representable block with the scale of the largest exponent among
     * them: every term is within maxTerm(n), so any n-way sum fits an int.
     */
    @Property(tries = 300)
    void noOverflowForAnyWorkersAndBlocks(
            @ForAll @IntRange(min = 1, max = ProtocolConstants.MAX_WORKERS) int n,
            @ForAll @IntRange(min = 1, max = 48) int k,
            @ForAll long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[][] blocks = randomBlocks(rnd, n, k);
        int eMax = eMaxOf(blocks);
        double scale = BlockQuantizer.scale(eMax, n);
        int maxTerm = BlockQuantizer.maxTerm(n);
        int[][] q = quantizeAll(blocks, scale);

        long largest = 0;
        for (int i = 0; i < k; i++) {
            long longSum = 0;
            int intSum = 0;
            // Worst case over every subset: the sum of the positive terms and of the negative ones.
            long positive = 0;
            long negative = 0;
            for (int w = 0; w < n; w++) {
                assertThat(Math.abs((long) q[w][i])).isLessThanOrEqualTo(maxTerm);
                longSum += q[w][i];
                intSum += q[w][i];
                if (q[w][i] > 0) {
                    positive += q[w][i];
                } else {
                    negative += q[w][i];
                }
                largest = Math.max(largest, Math.abs((long) q[w][i]));
            }
            assertThat((long) intSum).isEqualTo(longSum);
            assertThat(positive).isLessThanOrEqualTo(Integer.MAX_VALUE);
            assertThat(negative).isGreaterThanOrEqualTo(-(long) Integer.MAX_VALUE);
        }
        // The scale is not needlessly small: the block with the largest exponent uses at least
        // half of the range (its maximum is at least 2^(eMax - 1)), unless the maximum is subnormal.
        if (eMax > BlockQuantizer.MIN_EXPONENT) {
            assertThat(largest).isGreaterThanOrEqualTo(maxTerm / 2);
        }
    }

    @Test
    void noOverflowWhenEveryWorkerSendsTheBlockMaximumWithTheSameSign() {
        int[] workerCounts = {1, 2, 3, 5, 7, 64, 100, 127, 128, 255, 256};
        for (int eMax = BlockQuantizer.MIN_EXPONENT; eMax <= BlockQuantizer.MAX_EXPONENT; eMax++) {
            // The largest float below 2^eMax; for eMax = -126 that is the largest subnormal.
            float top = Math.nextDown((float) pow2(eMax));
            assertThat(exponentOf(top)).isEqualTo(eMax);
            for (int n : workerCounts) {
                assertAdversarialSumFits(top, eMax, n);
            }
        }
        for (int n = 1; n <= ProtocolConstants.MAX_WORKERS; n++) {
            for (int eMax : new int[] {-126, -125, -1, 0, 1, 24, 31, 100, 126, 127}) {
                assertAdversarialSumFits(Math.nextDown((float) pow2(eMax)), eMax, n);
            }
        }
    }

    private static void assertAdversarialSumFits(float top, int eMax, int n) {
        double scale = BlockQuantizer.scale(eMax, n);
        int maxTerm = BlockQuantizer.maxTerm(n);
        for (float x : new float[] {top, -top}) {
            int q = BlockQuantizer.quantize(x, scale);
            assertThat(Math.abs(q)).as("eMax %d n %d", eMax, n).isLessThanOrEqualTo(maxTerm);
            // Not wastefully small either: within one part in 2^23 of the limit (rounded).
            assertThat(Math.abs(q)).isGreaterThanOrEqualTo(maxTerm - (maxTerm >> 23) - 1);
            int intSum = 0;
            long longSum = 0;
            for (int w = 0; w < n; w++) {
                intSum += q;
                longSum += q;
            }
            assertThat((long) intSum).as("eMax %d n %d", eMax, n).isEqualTo(longSum);
            float back = BlockQuantizer.dequantize(intSum, scale);
            assertThat(Math.signum(back)).isEqualTo(Math.signum(x));
        }
    }

    // ------------------------------------------------------------------ error bound

    /**
     * The bound asserted for the dequantized n-way sum r against the exact sum S = sum x_w:
     *
     * <pre>
     *   q_w   = rint(fl(x_w * f)),   |fl(x_w * f) - x_w * f| &lt;= 2^-53 * |x_w * f| &lt; 2^-53 * 2^31 = 2^-22
     *   so    |q_w - x_w * f| &lt;= 1/2 + 2^-22
     *   Q     = sum q_w, exact in int (no overflow, above)
     *   d     = fl(Q / f),          |d - Q/f| &lt;= 2^-53 * |Q/f| &lt;= 2^-53 * n * 2^eMax
     *   r     = (float) d,          |r - d| &lt;= ulp(r) / 2
     *   |r - S| &lt;= ulp(r)/2 + 2^-53 * n * 2^eMax + n * (1/2 + 2^-22) / f
     * </pre>
     *
     * The dominant term is n / (2f) = n^2 * 2^eMax / (2 * maxTerm(n) * n) ~ n^2 * 2^(eMax - 32). S
     * is computed exactly with BigDecimal. When S is beyond the float range the result is the
     * infinity of S's sign (float overflow of the true sum, as float addition would give).
     */
    @Property(tries = 200)
    void dequantizedSumIsWithinTheRoundingBound(
            @ForAll @IntRange(min = 1, max = ProtocolConstants.MAX_WORKERS) int n,
            @ForAll @IntRange(min = 1, max = 16) int k,
            @ForAll long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[][] blocks = randomBlocks(rnd, n, k);
        int eMax = eMaxOf(blocks);
        double scale = BlockQuantizer.scale(eMax, n);
        int[][] q = quantizeAll(blocks, scale);
        for (int i = 0; i < k; i++) {
            BigDecimal exact = BigDecimal.ZERO;
            int sum = 0;
            for (int w = 0; w < n; w++) {
                exact = exact.add(new BigDecimal(blocks[w][i]));
                sum += q[w][i];
            }
            float r = BlockQuantizer.dequantize(sum, scale);
            double quantError = n * (0.5 + 0x1p-22) / scale;
            double divisionError = 0x1p-53 * n * pow2(eMax);
            if (Float.isInfinite(r)) {
                assertThat(exact.signum()).isEqualTo((int) Math.signum(r));
                assertThat(exact.abs().add(new BigDecimal(quantError + divisionError)))
                        .isGreaterThan(new BigDecimal(Float.MAX_VALUE));
                continue;
            }
            double bound = ((double) Math.ulp(r) / 2 + divisionError + quantError) * (1 + 0x1p-40);
            BigDecimal error = new BigDecimal(r).subtract(exact).abs();
            assertThat(error).as("n %d eMax %d element %d", n, eMax, i)
                    .isLessThanOrEqualTo(new BigDecimal(bound));

            // The mean divides by f * n, with the same bound divided by n.
            float mean = BlockQuantizer.dequantize(sum, scale * n);
            BigDecimal exactMean = exact.divide(BigDecimal.valueOf(n), java.math.MathContext.DECIMAL128);
            // fl(f * n) and the division each add a relative 2^-53; DECIMAL128 is far finer.
            double meanBound = ((double) Math.ulp(mean) / 2 + quantError / n + 0x1p-50 * pow2(eMax)) * (1 + 0x1p-40);
            assertThat(new BigDecimal(mean).subtract(exactMean).abs()).isLessThanOrEqualTo(new BigDecimal(meanBound));
        }
    }

    @Test
    void theSumOfTwoToThe127ValuesOverflowsToInfinityNeverToAWrongFiniteNumber() {
        int n = 4;
        double scale = BlockQuantizer.scale(127, n);
        int q = BlockQuantizer.quantize(JUST_BELOW_2_127, scale);
        assertThat(BlockQuantizer.dequantize(q * n, scale)).isEqualTo(Float.POSITIVE_INFINITY);
        assertThat(BlockQuantizer.dequantize(-q * n, scale)).isEqualTo(Float.NEGATIVE_INFINITY);
        // The mean of the same values is finite.
        assertThat(BlockQuantizer.dequantize(q * n, scale * n)).isCloseTo(JUST_BELOW_2_127, org.assertj.core.data.Percentage.withPercentage(1e-5));
    }

    @Test
    void sumOfSmallValuesIsAccurate() {
        // Hand-computed sums of a few workers' blocks.
        int n = 8;
        float[][] blocks = new float[n][];
        for (int w = 0; w < n; w++) {
            blocks[w] = new float[] {w, -w, 1f, 0.5f * w, 100f};
        }
        int eMax = eMaxOf(blocks);
        assertThat(eMax).isEqualTo(7); // 100 < 128
        double scale = BlockQuantizer.scale(eMax, n);
        int[][] q = quantizeAll(blocks, scale);
        float[] expected = {28f, -28f, 8f, 14f, 800f};
        for (int i = 0; i < expected.length; i++) {
            int sum = 0;
            for (int w = 0; w < n; w++) {
                sum += q[w][i];
            }
            assertThat(BlockQuantizer.dequantize(sum, scale)).isCloseTo(expected[i], org.assertj.core.data.Offset.offset(n * 0.5f / (float) scale + 1e-4f));
        }
    }

    // ------------------------------------------------------------------ determinism

    @Property(tries = 100)
    void integerSumAndResultDoNotDependOnArrivalOrder(
            @ForAll @IntRange(min = 2, max = ProtocolConstants.MAX_WORKERS) int n,
            @ForAll @IntRange(min = 1, max = 32) int k,
            @ForAll long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[][] blocks = randomBlocks(rnd, n, k);
        int[] reference = switchSum(blocks, identityOrder(n));
        int[] referenceBits = resultBits(blocks, reference);
        for (int round = 0; round < 5; round++) {
            List<Integer> order = identityOrder(n);
            Collections.shuffle(order, new Random(seed + round));
            float[][] shuffled = new float[n][];
            for (int w = 0; w < n; w++) {
                shuffled[w] = blocks[order.get(w)];
            }
            int[] sums = switchSum(blocks, order);
            assertThat(sums).isEqualTo(reference);
            // Every worker computes the same eMax and scale from the shuffled blocks too.
            assertThat(eMaxOf(shuffled)).isEqualTo(eMaxOf(blocks));
            assertThat(resultBits(shuffled, sums)).isEqualTo(referenceBits);
        }
    }

    private static List<Integer> identityOrder(int n) {
        List<Integer> order = new ArrayList<>();
        for (int w = 0; w < n; w++) {
            order.add(w);
        }
        return order;
    }

    /** What the switch does: the first arrival overwrites, the later ones add; exponent = max. */
    private static int[] switchSum(float[][] blocks, List<Integer> arrivalOrder) {
        int n = blocks.length;
        int k = blocks[0].length;
        // The exponents arrive (in this order) a window ahead; the switch keeps the max.
        int eMax = Integer.MIN_VALUE;
        for (int w : arrivalOrder) {
            eMax = Math.max(eMax, exponentOf(blocks[w]));
        }
        double scale = BlockQuantizer.scale(eMax, n);
        int[] values = new int[k];
        boolean first = true;
        for (int w : arrivalOrder) {
            for (int i = 0; i < k; i++) {
                int q = BlockQuantizer.quantize(blocks[w][i], scale);
                values[i] = first ? q : values[i] + q;
            }
            first = false;
        }
        return values;
    }

    private static int[] resultBits(float[][] blocks, int[] sums) {
        double scale = BlockQuantizer.scale(eMaxOf(blocks), blocks.length);
        int[] bits = new int[sums.length];
        for (int i = 0; i < sums.length; i++) {
            bits[i] = Float.floatToRawIntBits(BlockQuantizer.dequantize(sums[i], scale));
        }
        return bits;
    }

    // ------------------------------------------------------------------ FloatBuffer <-> packet

    private static FloatBuffer floatBuffer(int kind, int capacity) {
        switch (kind) {
            case 0:
                return FloatBuffer.allocate(capacity);
            case 1: // a heap slice with a nonzero array offset
                return FloatBuffer.allocate(capacity + 5).position(5).slice();
            case 2:
                return ByteBuffer.allocateDirect(capacity * 4).order(ByteOrder.nativeOrder()).asFloatBuffer();
            default:
                return ByteBuffer.allocateDirect(capacity * 4).order(ByteOrder.BIG_ENDIAN).asFloatBuffer();
        }
    }

    @Property(tries = 200)
    void quantizesABlockIntoThePacketAndZeroFillsTheTail(
            @ForAll PayloadSize size,
            @ForAll @IntRange(min = 0, max = 3) int srcKind,
            @ForAll boolean directPacket,
            @ForAll @IntRange(min = 0, max = 40) int from,
            @ForAll @IntRange(min = 0, max = 100) int countPercent,
            @ForAll @IntRange(min = 1, max = ProtocolConstants.MAX_WORKERS) int n,
            @ForAll long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int elements = size.elements();
        int count = elements * countPercent / 100;
        float[] block = randomBlock(rnd, Math.max(count, 1));
        FloatBuffer src = floatBuffer(srcKind, from + count + 3);
        for (int i = 0; i < src.capacity(); i++) {
            src.put(i, Float.NaN); // outside the block: must not be read into the payload
        }
        for (int i = 0; i < count; i++) {
            src.put(from + i, block[i]);
        }
        src.position(1);

        int offset = 3;
        ByteBuffer buf = directPacket ? ByteBuffer.allocateDirect(offset + size.packetBytes() + 4)
                : ByteBuffer.allocate(offset + size.packetBytes() + 4);
        AggregationPacket p = new AggregationPacket().wrap(buf, offset);
        p.header(size, 1, 2, 3, 0, 0, 0);
        for (int i = 0; i < elements; i++) {
            p.element(i, 0xDEADBEEF); // stale payload of the previous packet
        }
        buf.putInt(offset + size.packetBytes(), 0xCAFEBABE); // after the packet

        int e = BlockQuantizer.exponent(BlockQuantizer.maxMagnitudeBits(src, from, from + count));
        double scale = BlockQuantizer.scale(e, n);
        PayloadCodec codec = new PayloadCodec(elements);
        codec.quantize(src, from, from + count, scale, p, elements);

        for (int i = 0; i < count; i++) {
            assertThat(p.element(i)).isEqualTo(BlockQuantizer.quantize(block[i], scale));
            assertThat(Math.abs((long) p.element(i))).isLessThanOrEqualTo(BlockQuantizer.maxTerm(n));
        }
        for (int i = count; i < elements; i++) {
            assertThat(p.element(i)).as("tail element %d", i).isZero();
        }
        assertThat(buf.getInt(offset + size.packetBytes())).isEqualTo(0xCAFEBABE);
        assertThat(p.slot()).isEqualTo(3);
        assertThat(src.position()).isEqualTo(1);

        // And back, into another buffer kind, at an offset.
        FloatBuffer dst = floatBuffer(3 - srcKind, count + 10);
        for (int i = 0; i < dst.capacity(); i++) {
            dst.put(i, -1234.5f);
        }
        dst.position(0);
        int at = 7;
        codec.dequantize(p, count, scale, dst, at);
        for (int i = 0; i < dst.capacity(); i++) {
            if (i >= at && i < at + count) {
                float x = block[i - at];
                float back = dst.get(i);
                assertThat(back).isEqualTo(BlockQuantizer.dequantize(p.element(i - at), scale));
                assertThat(Math.abs((double) back - x)).isLessThanOrEqualTo((0.5 + 0x1p-22) / scale + Math.ulp(back));
                if (x == 0f) {
                    assertThat(Float.floatToRawIntBits(back)).isZero();
                }
            } else {
                assertThat(dst.get(i)).as("dst %d outside the block", i).isEqualTo(-1234.5f);
            }
        }
        assertThat(dst.position()).isZero();
    }

    @Test
    void emptyBlockZeroFillsTheWholePayload() {
        ByteBuffer buf = ByteBuffer.allocateDirect(PayloadSize.B256.packetBytes());
        AggregationPacket p = new AggregationPacket().wrap(buf, 0).header(PayloadSize.B256, 0, 0, 0, 0, 0, 0);
        for (int i = 0; i < 64; i++) {
            p.element(i, -1);
        }
        new PayloadCodec(64).quantize(floats(1f, 2f), 1, 1, 1.0, p, 64);
        for (int i = 0; i < 64; i++) {
            assertThat(p.element(i)).isZero();
        }
    }

    @Test
    void zeroFillTouchesOnlyItsRange() {
        ByteBuffer buf = ByteBuffer.allocate(PayloadSize.B128.packetBytes());
        AggregationPacket p = new AggregationPacket().wrap(buf, 0);
        for (int i = 0; i < 32; i++) {
            p.element(i, i + 1);
        }
        new PayloadCodec(32).zeroFill(p, 30);
        for (int i = 0; i < 32; i++) {
            assertThat(p.element(i)).isEqualTo(i < 30 ? 0 : i + 1);
        }
    }

    /** The biased rounding equals Math.rint wherever a term can fall (|x * f| <= 2^31 - 1). */
    @Property(tries = 2000)
    void biasedRoundingEqualsRint(@ForAll float x, @ForAll @IntRange(min = 1, max = 256) int n) {
        Assume.that(BlockQuantizer.representable(Float.floatToRawIntBits(x) & 0x7FFFFFFF));
        int e = BlockQuantizer.exponent(Float.floatToRawIntBits(x) & 0x7FFFFFFF);
        double scale = BlockQuantizer.scale(e, n);
        assertThat(BlockQuantizer.quantize(x, scale)).isEqualTo((int) Math.rint(x * scale));
    }

    @Test
    void roundsHalfToEven() {
        assertThat(BlockQuantizer.quantize(0.5f, 1.0)).isZero();
        assertThat(BlockQuantizer.quantize(1.5f, 1.0)).isEqualTo(2);
        assertThat(BlockQuantizer.quantize(-2.5f, 1.0)).isEqualTo(-2);
    }
}
