package io.switchml.client;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** The loss detector driven by synthetic send and answer times (no clock, no network). */
class LossDetectorTest {
    private static final long MS = 1_000_000;

    private static LossDetector detector(int slots) {
        return new LossDetector(slots, new RetransmissionTimeout(10 * MS, 20 * MS, 1000 * MS));
    }

    private static int[] detect(LossDetector d, long now) {
        int[] lost = new int[16];
        return Arrays.copyOf(lost, d.detect(now, lost));
    }

    @Test
    void aPacketSentWellBeforeAnAnsweredOneIsLost() {
        LossDetector d = detector(4);
        d.start(0);
        d.sent(0, 0, true);
        d.sent(1, 4 * MS, true);
        d.sent(2, 8 * MS, true);
        assertThat(d.answered(2, 12 * MS)).as("RTT of slot 2").isEqualTo(4 * MS);
        // srtt 4 ms: the reordering window is 1 ms; slots 0 and 1 were sent 8 and 4 ms before slot 2.
        assertThat(detect(d, 12 * MS)).containsExactly(0, 1);
        assertThat(d.timedOut()).isFalse();
        assertThat(d.isOutstanding(2)).isFalse();
    }

    @Test
    void onAPathThatOnlyReordersOnlyTheTimeoutFindsLoss() {
        LossDetector d = new LossDetector(3, new RetransmissionTimeout(200 * MS, 200 * MS, 1000 * MS), false);
        d.start(0);
        d.sent(0, 0, true);
        d.sent(1, 4 * MS, true);
        d.sent(2, 8 * MS, true);
        d.answered(2, 12 * MS);
        assertThat(detect(d, 12 * MS)).as("answered out of order, not lost").isEmpty();
        assertThat(detect(d, 150 * MS)).isEmpty();
        assertThat(detect(d, 213 * MS)).as("a whole timeout without a result").containsExactly(0, 1);
        assertThat(d.timedOut()).isTrue();
    }

    @Test
    void aPacketWithinTheReorderingWindowIsNotLost() {
        LossDetector d = detector(2);
        d.start(0);
        d.sent(0, 10 * MS, true);
        d.sent(1, 10 * MS + MS / 2, true);
        d.answered(1, 14 * MS);             // srtt 3.5 ms, window 0.875 ms; slot 0 is 0.5 ms older
        assertThat(detect(d, 14 * MS)).isEmpty();
    }

    @Test
    void silenceForATimeoutResendsTheOverduePacketsAndBacksOff() {
        LossDetector d = detector(3);
        d.start(0);
        d.sent(0, 0, true);
        d.sent(1, 0, true);
        assertThat(detect(d, 19 * MS)).as("before the 20 ms initial timeout").isEmpty();
        assertThat(detect(d, 21 * MS)).containsExactly(0, 1);
        assertThat(d.timedOut()).isTrue();
        d.sent(0, 21 * MS, false);
        d.sent(1, 21 * MS, false);
        assertThat(detect(d, 50 * MS)).as("the timeout doubled to 40 ms").isEmpty();
        assertThat(detect(d, 62 * MS)).containsExactly(0, 1);
        assertThat(d.attempts(0)).isEqualTo(1);
    }

    @Test
    void aTickLongAfterTheLastOneReadsWhatCameBeforeItTimesOut() {
        LossDetector d = detector(2);
        d.start(0);
        d.sent(0, 0, true);
        d.sent(1, 0, true);
        for (long t = 1; t <= 5; t++) {
            assertThat(detect(d, t * MS)).isEmpty();
        }
        // The loop does not run from 5 to 30 ms (20 ms initial timeout): what came meanwhile is still unread.
        assertThat(detect(d, 30 * MS)).as("a silence the loop did not watch").isEmpty();
        assertThat(d.timedOut()).isFalse();
        d.answered(0, 30 * MS + MS / 10);  // read right after that tick
        assertThat(detect(d, 31 * MS)).as("a result came: no timeout").isEmpty();
        assertThat(d.attempts(1)).isZero();
    }

    @Test
    void aLateTickDefersATrueTimeoutByOneTickOnly() {
        LossDetector d = detector(2);
        d.start(0);
        d.sent(0, 0, true);
        d.sent(1, 0, true);
        assertThat(detect(d, 5 * MS)).isEmpty();
        assertThat(detect(d, 30 * MS)).as("the loop did not run from 5 to 30 ms").isEmpty();
        assertThat(detect(d, 31 * MS)).as("nothing came: the next tick times out").containsExactly(0, 1);
        assertThat(d.timedOut()).isTrue();
    }

    @Test
    void aLoopThatIsAlwaysLateStillTimesOutOneTickLater() {
        LossDetector d = detector(2);
        d.start(0);
        d.sent(0, 0, true);
        d.sent(1, 0, true);
        // Every tick comes 15 ms after the one before, more than half the 20 ms timeout: each could be put off.
        assertThat(detect(d, 15 * MS)).isEmpty();
        assertThat(detect(d, 30 * MS)).as("silent for a timeout, the loop late: put off").isEmpty();
        assertThat(detect(d, 45 * MS)).as("put off once, not again").containsExactly(0, 1);
        assertThat(d.timedOut()).isTrue();
    }

    @Test
    void anAnswerToARetransmittedPacketGivesNoRttSample() {
        LossDetector d = detector(1);
        d.start(0);
        d.sent(0, 0, true);
        d.sent(0, 25 * MS, false);
        assertThat(d.answered(0, 26 * MS)).as("Karn's rule").isEqualTo(-1);
        assertThat(d.smoothedRttNanos()).isZero();
        d.sent(0, 30 * MS, true);
        assertThat(d.answered(0, 32 * MS)).isEqualTo(2 * MS);
        assertThat(d.smoothedRttNanos()).isEqualTo(2 * MS);
    }

    @Test
    void aForgottenSlotIsNeverResent() {
        LossDetector d = detector(2);
        d.start(0);
        d.sent(0, 0, true);
        d.forget(0);
        assertThat(detect(d, 100 * MS)).isEmpty();
        d.start(200 * MS);
        assertThat(d.isOutstanding(0)).isFalse();
    }
}
