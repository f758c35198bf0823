package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.OneRound;
import io.switchml.protocol.PayloadSize;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The one-round mode (docs/ARCHITECTURE.md section 8): raw float32 contributions staged per slot and
 * quantized at the round's maximum exponent, with the same arithmetic as two rounds; retransmissions,
 * shadow copies and malformed packets handled as for any packet.
 */
class SwitchProgramOneRoundTest {
    private static final PayloadSize SIZE = PayloadSize.B128; // 32 elements
    private static final int K = SIZE.elements();
    private static final int TAG = 0x5A3C;

    private final SwitchHarness harness = new SwitchHarness();

    /** A job of this project's workers (round numbers) with the one-round mode for up to {@code limit} values. */
    private JobSpec oneRoundJob(int workers, int limit) {
        JobSpec plain = TestJobs.job(1, workers, SIZE, 4, 1, true);
        return harness.install(new JobSpec(plain.jobNumber(), plain.name(), SIZE, 4, 1, plain.endpoints(), true, limit));
    }

    private static ByteBuffer raw(int tsi, int slot, int tag, float... values) {
        ByteBuffer buffer = ByteBuffer.allocate(AggregationPacket.bytesFor(values.length));
        AggregationPacket packet = new AggregationPacket().wrap(buffer, 0).header(SIZE, 1, tsi, slot, tsi & 1, 0, 0);
        packet.oneRound(true);
        OneRound.writeTag(packet, tag);
        for (int i = 0; i < values.length; i++) {
            packet.element(i, Float.floatToRawIntBits(values[i]));
        }
        return buffer;
    }

    /** What two rounds produce: the exponent the switch would return, then the sums of the quantized values. */
    private static int[] twoRoundSums(float[][] byRank, int[] exponentAndFlag) {
        int n = byRank.length;
        int maxBits = 0;
        for (float[] values : byRank) {
            maxBits = Math.max(maxBits, BlockQuantizer.maxMagnitudeBits(values, 0, values.length));
        }
        int e = BlockQuantizer.exponent(maxBits);
        exponentAndFlag[0] = e;
        exponentAndFlag[1] = BlockQuantizer.flag(maxBits);
        int[] sums = new int[byRank[0].length];
        if (!BlockQuantizer.representable(maxBits)) {
            return sums;
        }
        double scale = BlockQuantizer.scale(e, n);
        for (float[] values : byRank) {
            for (int i = 0; i < values.length; i++) {
                sums[i] += BlockQuantizer.quantize(values[i], scale);
            }
        }
        return sums;
    }

    private static float[][] randomFloats(long seed, int n, int length) {
        Random random = new Random(seed);
        float[][] values = new float[n][length];
        for (float[] v : values) {
            for (int i = 0; i < length; i++) {
                v[i] = (float) (random.nextGaussian() * Math.scalb(1.0, random.nextInt(20) - 10));
            }
        }
        return values;
    }

    @Test
    void resultEqualsTheTwoRoundProtocolsForOneTwoAndFourWorkers() {
        for (int n : new int[]{1, 2, 4}) {
            SwitchHarness fresh = new SwitchHarness();
            JobSpec plain = TestJobs.job(1, n, SIZE, 4, 1, true);
            JobSpec job = new JobSpec(1, "job", SIZE, 4, 1, plain.endpoints(), true, K);
            fresh.install(job);
            float[][] values = randomFloats(n, n, 29);
            values[0][3] = 0f;
            values[n - 1][4] = Float.MIN_VALUE; // a denormal
            values[0][5] = -0f;
            for (int r = 0; r < n; r++) {
                NextStep step = fresh.fromWorker(job, r, 2, raw(0, 2, TAG, values[r]));
                assertThat(step).isEqualTo(r == n - 1 ? NextStep.MULTICAST : NextStep.CONSUME);
            }
            int[] exponent = new int[2];
            int[] expected = twoRoundSums(values, exponent);
            List<RecordingSink.Sent> sent = fresh.sink.drain();
            assertThat(sent).hasSize(n);
            for (RecordingSink.Sent s : sent) {
                assertThat(s.bytes()).hasSize(AggregationPacket.bytesFor(29));
                assertThat(s.elements()).as("%d workers", n).containsExactly(expected);
                assertThat(s.packet().exponent0()).isEqualTo(exponent[0]);
                assertThat(s.packet().exponent1()).isEqualTo(BlockQuantizer.FLAG_NONE);
                assertThat(s.packet().tsi()).isZero();
            }
            assertThat(fresh.count(SwitchCounter.ONE_ROUND_RESULTS)).isEqualTo(1);
        }
    }

    @Test
    void anUnrepresentableValueFlagsTheBlockAndSumsZeros() {
        JobSpec job = oneRoundJob(2, K);
        harness.fromWorker(job, 0, 0, raw(0, 0, TAG, 1f, Float.NaN));
        harness.fromWorker(job, 1, 0, raw(0, 0, TAG, 2f, 3f));
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(2).allSatisfy(s -> {
            assertThat(s.packet().exponent1()).isEqualTo(BlockQuantizer.FLAG_UNREPRESENTABLE);
            assertThat(s.elements()).containsExactly(0, 0);
        });
    }

    @Test
    void zerosAndDenormalsAreQuantizedAtTheSmallestExponent() {
        JobSpec job = oneRoundJob(2, K);
        float[][] values = {{0f, 0f, 0f, Float.MIN_NORMAL / 2}, {0f, -0f, Float.MIN_VALUE, 0f}};
        harness.fromWorker(job, 0, 0, raw(0, 0, TAG, values[0]));
        harness.fromWorker(job, 1, 0, raw(0, 0, TAG, values[1]));
        int[] expected = twoRoundSums(values, new int[2]);
        assertThat(expected[0]).isZero();
        assertThat(expected[2]).as("a denormal is carried at 2^-126").isPositive();
        assertThat(harness.sink.drain()).hasSize(2).allSatisfy(s -> {
            assertThat(s.packet().exponent0()).isEqualTo(BlockQuantizer.MIN_EXPONENT);
            assertThat(s.elements()).containsExactly(expected);
        });
    }

    @Test
    void aRetransmissionIsNotStagedTwiceAndALostResultComesFromTheShadowCopy() {
        JobSpec job = oneRoundJob(3, K);
        float[][] values = randomFloats(9, 3, 10);
        harness.fromWorker(job, 0, 1, raw(0, 1, TAG, values[0]));
        assertThat(harness.fromWorker(job, 0, 1, raw(0, 1, TAG, values[0]))).as("retransmission before the result")
                .isEqualTo(NextStep.DROP);
        harness.fromWorker(job, 1, 1, raw(0, 1, TAG, values[1]));
        assertThat(harness.fromWorker(job, 2, 1, raw(0, 1, TAG, values[2]))).isEqualTo(NextStep.MULTICAST);
        int[] expected = twoRoundSums(values, new int[2]);
        byte[] multicast = harness.sink.drain().get(0).bytes();
        assertThat(TestPackets.elements(multicast)).containsExactly(expected);
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isEqualTo(3);

        // Rank 1 lost the result: its retransmission gets the same bytes, from the stored result, to it alone.
        assertThat(harness.fromWorker(job, 1, 1, raw(0, 1, TAG, values[1]))).isEqualTo(NextStep.UNICAST);
        List<RecordingSink.Sent> again = harness.sink.drain();
        assertThat(again).hasSize(1);
        assertThat(again.get(0).recipient()).isEqualTo(TestJobs.recipient(job, 1, 0));
        assertThat(again.get(0).bytes()).isEqualTo(multicast);
        assertThat(harness.count(SwitchCounter.RETRANSMISSIONS_ANSWERED)).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.ONE_ROUND_RESULTS)).isEqualTo(1);
    }

    @Test
    void theNextRoundOfTheSlotStartsAfreshInTheOtherSet() {
        JobSpec job = oneRoundJob(2, K);
        harness.fromWorker(job, 0, 0, raw(0, 0, TAG, 100f, 200f));
        harness.fromWorker(job, 1, 0, raw(0, 0, TAG, 1f, 2f));
        harness.sink.drain();
        float[][] next = {{0.5f}, {0.25f}};
        harness.fromWorker(job, 0, 0, raw(1, 0, TAG, next[0]));
        harness.fromWorker(job, 1, 0, raw(1, 0, TAG, next[1]));
        int[] exponent = new int[2];
        int[] expected = twoRoundSums(next, exponent);
        assertThat(harness.sink.drain()).hasSize(2).allSatisfy(s -> {
            assertThat(s.elements()).containsExactly(expected);
            assertThat(s.packet().exponent0()).isEqualTo(exponent[0]);
        });
    }

    @Test
    void disagreeingTagsLengthsOrModesPoisonTheResult() {
        JobSpec job = oneRoundJob(2, K);
        harness.fromWorker(job, 0, 0, raw(0, 0, TAG, 1f, 2f));
        harness.fromWorker(job, 1, 0, raw(0, 0, TAG + 1, 1f, 2f));
        assertPoisoned(2);

        harness.fromWorker(job, 0, 1, raw(0, 1, TAG, 1f, 2f));
        harness.fromWorker(job, 1, 1, raw(0, 1, TAG, 1f, 2f, 3f));
        assertPoisoned(3); // at the length of the packet that completed the round

        // A two-round packet (exponents and descriptor) meets a one-round one: both ways round.
        harness.fromWorker(job, 0, 2, raw(0, 2, TAG, 1f, 2f, 3f, 4f));
        harness.contributeWithTsi(job, 1, 2, 0, 0, -3, 0, 1, 1, 2, 4);
        assertPoisoned(K); // the two-round packet, which completed the round, was a full one
        harness.contributeWithTsi(job, 0, 3, 0, 0, -3, 0, 1, 1, 2, 4);
        harness.fromWorker(job, 1, 3, raw(0, 3, TAG, 1f, 2f, 3f, 4f));
        assertPoisoned(4);
        assertThat(harness.count(SwitchCounter.MISMATCHED_ROUNDS)).isEqualTo(4);
        assertThat(harness.count(SwitchCounter.ONE_ROUND_RESULTS)).isZero();
    }

    private void assertPoisoned(int elements) {
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(2).allSatisfy(s -> {
            assertThat(s.packet().exponent1()).isEqualTo(OneRound.FLAG_MISMATCH);
            assertThat(s.elements()).hasSize(elements);
            assertThat(s.elements()[0]).isEqualTo(OneRound.POISON);
        });
    }

    @Test
    void twoRoundPacketsOfTheSameJobAreSummedAsBefore() {
        JobSpec job = oneRoundJob(2, K);
        harness.contributeWithTsi(job, 0, 0, 0, 0, -3, 0, 5, 6);
        harness.contributeWithTsi(job, 1, 0, 0, 0, -1, 0, 1, 1);
        assertThat(harness.sink.drain()).hasSize(2).allSatisfy(s -> {
            assertThat(s.packet().exponent0()).isEqualTo(-1);
            assertThat(s.packet().exponent1()).isZero();
            assertThat(s.elements()[0]).isEqualTo(6);
            assertThat(s.elements()[1]).isEqualTo(7);
        });
        assertThat(harness.count(SwitchCounter.MISMATCHED_ROUNDS)).isZero();
    }

    private static ByteBuffer rawInts(int tsi, int slot, int tag, int... values) {
        ByteBuffer buffer = ByteBuffer.allocate(AggregationPacket.bytesFor(values.length));
        AggregationPacket packet = new AggregationPacket().wrap(buffer, 0).header(SIZE, 1, tsi, slot, tsi & 1, 0, 0);
        packet.oneRound(true).oneRoundIntegers(true);
        OneRound.writeTag(packet, tag);
        packet.writeElements(values, values.length);
        return buffer;
    }

    @Test
    void oneRoundIntegersAreSummedAsTheyAreWithTheTagsChecked() {
        JobSpec job = oneRoundJob(2, 8); // int32 needs no staging: longer than it is fine
        int[] a = TestPackets.filled(K, 3);
        a[0] = Integer.MAX_VALUE;
        harness.fromWorker(job, 0, 0, rawInts(0, 0, 0x7F7F, a));
        assertThat(harness.fromWorker(job, 1, 0, rawInts(0, 0, 0x7F7F, TestPackets.filled(K, 4))))
                .isEqualTo(NextStep.MULTICAST);
        int[] expected = TestPackets.filled(K, 7);
        expected[0] = Integer.MAX_VALUE + 4; // wraps, as 32-bit registers do
        assertThat(harness.sink.drain()).hasSize(2).allSatisfy(s -> {
            assertThat(s.elements()).containsExactly(expected);
            assertThat(s.packet().exponent0()).as("the tags' bytes are not a result").isZero();
            assertThat(s.packet().exponent1()).isZero();
            assertThat(s.packet().oneRoundIntegers()).isTrue();
        });
        assertThat(harness.count(SwitchCounter.ONE_ROUND_RESULTS)).isEqualTo(1);

        harness.fromWorker(job, 0, 1, rawInts(0, 1, 0x7F7F, 1, 2));
        harness.fromWorker(job, 1, 1, rawInts(0, 1, 0x7F7E, 1, 2));
        assertPoisoned(2);
        harness.fromWorker(job, 0, 2, rawInts(0, 2, TAG, 1, 2));
        harness.fromWorker(job, 1, 2, raw(0, 2, TAG, 1f, 2f));
        assertPoisoned(2);
    }

    @Test
    void aOneRoundPacketLongerThanTheStagingIsDroppedAndCounted() {
        JobSpec job = oneRoundJob(2, 8);
        assertThat(harness.fromWorker(job, 0, 0, raw(0, 0, TAG, new float[9]))).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.ONE_ROUND_TOO_LONG)).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isZero();
        assertThat(harness.installed(1).workersCounter().remaining(0, 0)).isZero();
        assertThat(harness.installed(1).bitmapChecker().seen(0, 0, 0)).isFalse();
        // Within the staging it is taken.
        assertThat(harness.fromWorker(job, 0, 0, raw(0, 0, TAG, new float[8]))).isEqualTo(NextStep.CONSUME);
    }

    @Test
    void jobsWithoutTheModeRefuseTheFlagAsAnUnusedBit() {
        JobSpec withRounds = harness.install(TestJobs.job(2, 2, SIZE, 4, 1, true));
        ByteBuffer packet = raw(0, 0, TAG, 1f);
        new AggregationPacket().wrap(packet, 0).jobNumber(2);
        assertThat(harness.fromWorker(withRounds, 0, 0, packet)).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.UNUSED_BITS)).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isZero();
    }

    @Test
    void aSwitchMlJobCannotHaveTheMode() {
        JobSpec switchMl = TestJobs.job(3, 2, SIZE, 4, 1, false);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new JobSpec(3, "s", SIZE, 4, 1,
                        switchMl.endpoints(), false, K))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("round numbers");
    }

    @Test
    void stagingOverTheSwitchsLimitInstallsTheJobWithoutTheMode() {
        ControlPlane small = new ControlPlane(1000, 1000, 1L << 30, 1024);
        JobSpec plain = TestJobs.job(1, 4, SIZE, 4, 1, true);
        JobSpec asked = new JobSpec(1, "big", SIZE, 4, 1, plain.endpoints(), true, K); // 4 slots x 4 x 32 x 4 B = 2 KiB
        JobSpec installed = small.installJob(asked);
        assertThat(asked.oneRoundStagingBytes()).isEqualTo(2048);
        assertThat(installed.oneRoundElements()).isZero();
        assertThat(small.installedJob(1).oneRoundStaging()).isNull();
        JobSpec fits = new JobSpec(2, "fits", SIZE, 4, 1, TestJobs.job(2, 4, SIZE, 4, 1, true).endpoints(), true, 16);
        assertThat(small.installJob(fits).oneRoundElements()).isEqualTo(16);
        assertThat(small.installedJob(2).oneRoundStaging().capacity()).isEqualTo(16);
    }

    @Test
    void theDropSimulatorLosesOneRoundPacketsLikeAnyOther() {
        JobSpec job = oneRoundJob(2, K);
        harness.dropProbabilities.set(1.0, 0.0);
        assertThat(harness.fromWorker(job, 0, 0, raw(0, 0, TAG, 1f))).isEqualTo(NextStep.DROP);
        harness.dropProbabilities.set(0.0, 0.0);
        harness.fromWorker(job, 1, 0, raw(0, 0, TAG, 2f));
        assertThat(harness.fromWorker(job, 0, 0, raw(0, 0, TAG, 1f))).as("the resent packet").isEqualTo(NextStep.MULTICAST);
        int[] expected = twoRoundSums(new float[][]{{1f}, {2f}}, new int[2]);
        assertThat(harness.sink.drain()).hasSize(2).allSatisfy(s -> assertThat(s.elements()).containsExactly(expected));
    }

}
