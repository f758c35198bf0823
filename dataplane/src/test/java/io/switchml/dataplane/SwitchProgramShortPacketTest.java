package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadSize;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Packets shorter than their size code's k elements: a tensor's last block, or exponents only. */
class SwitchProgramShortPacketTest {
    private static final PayloadSize SIZE = PayloadSize.B128; // 32 elements
    private static final int K = SIZE.elements();

    private final SwitchHarness harness = new SwitchHarness();

    @Test
    void shortContributionsAreSummedAndAnsweredAtTheirLength() {
        JobSpec job = harness.install(TestJobs.job(1, 2, SIZE, 4, 1));
        assertThat(shortContribution(job, 0, 1, 0, 5, 1, 2, 3)).isEqualTo(NextStep.CONSUME);
        assertThat(shortContribution(job, 1, 1, 0, 7, 10, 20, 30)).isEqualTo(NextStep.MULTICAST);

        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(2);
        for (RecordingSink.Sent s : sent) {
            assertThat(s.bytes()).hasSize(AggregationPacket.bytesFor(3));
            assertThat(s.elements()).containsExactly(11, 22, 33);
            assertThat(s.packet().exponent0()).isEqualTo(7);
        }
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isEqualTo(2);
    }

    @Test
    void aShortRoundAfterAFullOneSeesNoneOfItsSums() {
        JobSpec job = harness.install(TestJobs.job(1, 2, SIZE, 4, 1));
        int[] full = TestPackets.filled(K, 9);
        harness.contribute(job, 0, 2, 0, 0, 0, full);
        harness.contribute(job, 1, 2, 0, 0, 0, full);
        harness.contribute(job, 0, 2, 1, 0, 0, full);
        harness.contribute(job, 1, 2, 1, 0, 0, full);
        harness.sink.drain();
        // Set 0 again: a short round, then a full one whose tail must not hold set 0's old sums.
        shortContribution(job, 0, 2, 0, 0, 4);
        shortContribution(job, 1, 2, 0, 0, 5);
        assertThat(harness.sink.drain()).allSatisfy(s -> assertThat(s.elements()).containsExactly(9));
        harness.contribute(job, 0, 2, 1, 0, 0, 1);
        harness.contribute(job, 1, 2, 1, 0, 0, 2);
        int[] expected = new int[K];
        expected[0] = 3;
        assertThat(harness.sink.drain()).allSatisfy(s -> assertThat(s.elements()).containsExactly(expected));
    }

    @Test
    void aContributionOfAnotherLengthIsRefusedNotSummedWithZeros() {
        JobSpec job = harness.install(TestJobs.job(1, 3, SIZE, 4, 1));
        shortContribution(job, 0, 3, 0, 0, 1, 2);
        shortContribution(job, 1, 3, 0, 0, 10, 20);
        assertThat(shortContribution(job, 2, 3, 0, 0, 100, 200, 300)).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.LENGTH_MISMATCH)).isEqualTo(1);
        assertThat(harness.sink.drain()).isEmpty();

        assertThat(shortContribution(job, 2, 3, 0, 0, 100, 200)).isEqualTo(NextStep.MULTICAST);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(3).allSatisfy(s -> assertThat(s.elements()).containsExactly(111, 222));
    }

    @Test
    void aLongerPacketFromTheRoundsOnlySenderReplacesItsShorterOne() {
        JobSpec job = harness.install(TestJobs.job(1, 2, SIZE, 4, 1));
        shortContribution(job, 0, 3, 0, 5, 1, 2);
        assertThat(shortContribution(job, 0, 3, 0, 1, 1, 2, 3)).isEqualTo(NextStep.CONSUME);
        assertThat(harness.count(SwitchCounter.ROUNDS_REOPENED)).isEqualTo(1);
        assertThat(shortContribution(job, 1, 3, 0, 2, 10, 20, 30)).isEqualTo(NextStep.MULTICAST);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(2).allSatisfy(s -> {
            assertThat(s.elements()).containsExactly(11, 22, 33);
            assertThat(s.packet().exponent0()).as("the replaced contribution's exponent is gone").isEqualTo(2);
        });
    }

    @Test
    void aShortRetransmissionIntoACompleteFullRoundIsRefused() {
        JobSpec job = harness.install(TestJobs.job(1, 2, SIZE, 4, 1));
        harness.contribute(job, 0, 2, 0, 0, 0, TestPackets.filled(K, 1));
        harness.contribute(job, 1, 2, 0, 0, 0, TestPackets.filled(K, 2));
        harness.sink.drain();
        assertThat(shortContribution(job, 1, 2, 0, 0, 2, 2)).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.LENGTH_MISMATCH)).isEqualTo(1);
        assertThat(harness.sink.drain()).isEmpty();
    }

    @Test
    void aRetransmittedShortPacketGetsTheStoredResultAtItsLength() {
        JobSpec job = harness.install(TestJobs.job(1, 2, SIZE, 4, 1));
        shortContribution(job, 0, 0, 0, 0, 1, 2, 3, 4);
        shortContribution(job, 1, 0, 0, 0, 1, 2, 3, 4);
        harness.sink.drain();
        assertThat(shortContribution(job, 1, 0, 0, 0, 1, 2, 3, 4)).isEqualTo(NextStep.UNICAST);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(1);
        assertThat(sent.get(0).elements()).containsExactly(2, 4, 6, 8);
    }

    @Test
    void lengthsThatAreNotWholeElementsAreTruncated() {
        JobSpec job = harness.install(TestJobs.job(1, 2, SIZE, 4, 1));
        ByteBuffer header = TestPackets.shortPacket(SIZE, 1, 1, 0, 0, 0, 0);
        ByteBuffer partial = ByteBuffer.allocate(AggregationPacket.bytesFor(2) - 1);
        partial.put(0, TestPackets.shortPacket(SIZE, 1, 1, 0, 0, 0, 0, 1, 2), 0, partial.capacity());
        assertThat(harness.fromWorker(job, 0, 0, header)).isEqualTo(NextStep.DROP);
        assertThat(harness.fromWorker(job, 0, 0, partial)).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.TRUNCATED)).isEqualTo(2);
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isZero();
    }

    private NextStep shortContribution(JobSpec job, int rank, int slot, int set, int e0, int... values) {
        return harness.fromWorker(job, rank, slot, TestPackets.shortPacket(SIZE, job.jobNumber(), 1, slot, set, e0, 0, values));
    }
}
