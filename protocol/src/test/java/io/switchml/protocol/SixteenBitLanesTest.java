package io.switchml.protocol;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SixteenBitLanesTest {

    /** The switch's wrapping int32 sum of packed terms unpacks to each lane's own sum, whatever the signs. */
    @Property(tries = 2000)
    void theSumOfPackedTermsIsThePackedPairOfTheLaneSums(@ForAll @IntRange(min = 1, max = 128) int workers,
                                                         @ForAll long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int max = SixteenBitLanes.maxTerm(workers);
        int element = 0;
        int firstSum = 0;
        int secondSum = 0;
        for (int w = 0; w < workers; w++) {
            // Extremes often: the headroom rule is what keeps the lanes apart.
            int first = random.nextInt(4) == 0 ? (random.nextBoolean() ? max : -max) : random.nextInt(-max, max + 1);
            int second = random.nextInt(4) == 0 ? (random.nextBoolean() ? max : -max) : random.nextInt(-max, max + 1);
            element += SixteenBitLanes.pack(first, second);
            firstSum += first;
            secondSum += second;
        }
        assertThat(SixteenBitLanes.first(element)).isEqualTo(firstSum);
        assertThat(SixteenBitLanes.second(element)).isEqualTo(secondSum);
    }

    @Test
    void aTermKeeps14BitsAtTwoWorkersAnd8At128AndMoreWorkersAreRefused() {
        assertThat(SixteenBitLanes.maxTerm(2)).isEqualTo(16383);
        assertThat(SixteenBitLanes.significantBits(2)).isEqualTo(14);
        assertThat(SixteenBitLanes.significantBits(16)).isEqualTo(11); // float16's significand
        assertThat(SixteenBitLanes.significantBits(128)).isEqualTo(8); // bfloat16's
        assertThatThrownBy(() -> SixteenBitLanes.maxTerm(129)).hasMessageContaining("worse than bfloat16");
        assertThat(SixteenBitLanes.elementsFor(5)).isEqualTo(3);
        assertThat(SixteenBitLanes.elementsFor(4)).isEqualTo(2);
    }

    /** Quantizing at the block's exponent never exceeds the term bound, so no lane can overflow. */
    @Property(tries = 500)
    void quantizedTermsStayWithinTheBound(@ForAll @IntRange(min = 1, max = 128) int workers, @ForAll float x) {
        int bits = Float.floatToRawIntBits(x) & 0x7FFFFFFF;
        if (!BlockQuantizer.representable(bits)) {
            return;
        }
        double scale = SixteenBitLanes.scale(BlockQuantizer.exponent(bits), workers);
        assertThat(Math.abs(BlockQuantizer.quantize(x, scale))).isLessThanOrEqualTo(SixteenBitLanes.maxTerm(workers));
    }
}
