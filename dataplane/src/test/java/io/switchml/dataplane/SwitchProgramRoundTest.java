package io.switchml.dataplane;

import io.switchml.protocol.PayloadSize;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Late duplicates of finished rounds: dropped by the round checker for this project's workers (the
 * tsi is the slot's round), while SwitchML's semantics would take them for new contributions.
 */
class SwitchProgramRoundTest {
    private static final PayloadSize SIZE = PayloadSize.B128;
    private final SwitchHarness harness = new SwitchHarness();

    private JobSpec job(boolean roundNumbers) {
        return harness.install(TestJobs.job(1, 2, SIZE, 4, 1, roundNumbers));
    }

    /** Rank's packet for round {@code round} of slot 0 (set = round parity) carrying {@code value}. */
    private NextStep send(JobSpec spec, int rank, int round, int value) {
        return harness.contributeWithTsi(spec, rank, 0, round & 1, round, 0, 0, value);
    }

    private int lastResult() {
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).isNotEmpty();
        return sent.get(sent.size() - 1).elements()[0];
    }

    @Test
    void roundsFollowEachOtherOnAlternatingCopies() {
        JobSpec spec = job(true);
        for (int round = 0; round < 6; round++) {
            assertThat(send(spec, 0, round, round)).isEqualTo(NextStep.CONSUME);
            assertThat(send(spec, 1, round, 100)).isEqualTo(NextStep.MULTICAST);
            assertThat(lastResult()).as("round %d", round).isEqualTo(round + 100);
        }
        assertThat(harness.installed(1).roundChecker().round(0, 0)).isEqualTo(4);
        assertThat(harness.installed(1).roundChecker().round(1, 0)).isEqualTo(5);
        assertThat(harness.count(DropReason.STALE_ROUND)).isZero();
    }

    @Test
    void aLateDuplicateCannotOpenARoundAgain() {
        JobSpec spec = job(true);
        send(spec, 0, 0, 1);
        send(spec, 1, 0, 2);                       // round 0 complete: 3
        send(spec, 0, 1, 10);                      // rank 0 moves on: its bit in copy 0 is cleared
        // A duplicate of rank 0's round-0 packet arrives late: copy 0 is complete and rank 0's bit is
        // clear, which SwitchML would read as the first packet of a new round.
        assertThat(send(spec, 0, 0, 1)).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.STALE_ROUND)).isEqualTo(1);
        send(spec, 1, 1, 20);
        assertThat(lastResult()).isEqualTo(30);
        send(spec, 0, 2, 5);
        assertThat(send(spec, 1, 2, 6)).isEqualTo(NextStep.MULTICAST);
        assertThat(lastResult()).as("round 2 holds only round 2's values").isEqualTo(11);
    }

    @Test
    void aLateDuplicateCannotJoinALaterRoundInProgress() {
        JobSpec spec = job(true);
        send(spec, 0, 0, 1);
        send(spec, 1, 0, 2);
        send(spec, 0, 1, 1);
        send(spec, 1, 1, 2);
        send(spec, 1, 2, 7);                       // round 2 in progress on copy 0, rank 0 not yet in
        assertThat(send(spec, 0, 0, 1000)).isEqualTo(NextStep.DROP);
        assertThat(send(spec, 0, 2, 3)).isEqualTo(NextStep.MULTICAST);
        assertThat(lastResult()).isEqualTo(10);
        assertThat(harness.count(DropReason.STALE_ROUND)).isEqualTo(1);
    }

    @Test
    void retransmissionsOfTheCurrentRoundsAreStillAnswered() {
        JobSpec spec = job(true);
        send(spec, 0, 0, 1);
        send(spec, 1, 0, 2);
        send(spec, 0, 1, 3);
        harness.sink.drain();
        // Rank 1 lost round 0's result and asks again while round 1 is in progress.
        assertThat(send(spec, 1, 0, 2)).isEqualTo(NextStep.UNICAST);
        assertThat(lastResult()).isEqualTo(3);
        // Rank 0 retransmits its round-1 packet before round 1 is complete: dropped, not added twice.
        assertThat(send(spec, 0, 1, 3)).isEqualTo(NextStep.DROP);
        assertThat(harness.count(SwitchCounter.RETRANSMISSIONS_DROPPED)).isEqualTo(1);
        assertThat(send(spec, 1, 1, 4)).isEqualTo(NextStep.MULTICAST);
        assertThat(lastResult()).isEqualTo(7);
        assertThat(harness.count(DropReason.STALE_ROUND)).isZero();
    }

    @Test
    void aRoundOnTheWrongCopyIsRefused() {
        JobSpec spec = job(true);
        assertThat(harness.contributeWithTsi(spec, 0, 0, 1, 0, 0, 0, 1)).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.STALE_ROUND)).isEqualTo(1);
        assertThat(harness.installed(1).bitmapChecker().seen(1, 0, 0)).as("nothing applied").isFalse();
    }

    @Test
    void withSwitchMlSemanticsTheSameLateDuplicateCorruptsTheSum() {
        JobSpec spec = job(false);
        send(spec, 0, 0, 1);
        send(spec, 1, 0, 2);
        send(spec, 0, 1, 10);
        assertThat(send(spec, 0, 0, 1)).as("taken for a new round").isEqualTo(NextStep.CONSUME);
        send(spec, 1, 1, 20);
        harness.sink.drain();
        assertThat(send(spec, 0, 2, 5)).as("rank 0's real packet looks like a retransmission").isEqualTo(NextStep.DROP);
        assertThat(send(spec, 1, 2, 6)).isEqualTo(NextStep.MULTICAST);
        assertThat(lastResult()).as("the stale value replaced rank 0's").isEqualTo(7);
    }
}
