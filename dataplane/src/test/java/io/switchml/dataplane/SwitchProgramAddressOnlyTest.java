package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.switchml.protocol.PayloadSize;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Workers matched by address alone (SwitchML's): any source port, their own job number in the
 * header, and results at the port the packet came from.
 */
class SwitchProgramAddressOnlyTest {
    private static final PayloadSize SIZE = PayloadSize.B256;
    private static final int JOB = 7;
    private static final int WORKER_PORT = 4000;

    private final SwitchHarness harness = new SwitchHarness();
    private final InetAddress rank0 = TestJobs.address(JOB, 0);
    private final InetAddress rank1 = TestJobs.address(JOB, 1);

    {
        harness.install(new JobSpec(JOB, "switchml", SIZE, 16, 1,
            List.of(WorkerEndpoint.matchedByAddress(rank0), WorkerEndpoint.matchedByAddress(rank1)), false));
    }

    @Test
    void aggregatesFromAnyPortWhateverTheJobNumberFieldAndAnswersAtTheSourcePort() {
        // SwitchML's short job id (here 200) is the worker's, not the switch's job number.
        harness.deliver(rank0, WORKER_PORT + 1, 0, TestPackets.packet(SIZE, 200, 5, 3, 0, 0, 0, TestPackets.filled(64, 2)));
        NextStep last = harness.deliver(rank1, WORKER_PORT + 1, 0,
                TestPackets.packet(SIZE, 200, 5, 3, 0, 0, 0, TestPackets.filled(64, 3)));

        assertThat(last).isEqualTo(NextStep.MULTICAST);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).extracting(RecordingSink.Sent::recipient).containsExactly(
                new InetSocketAddress(rank0, WORKER_PORT + 1), new InetSocketAddress(rank1, WORKER_PORT + 1));
        assertThat(sent.get(0).elements()).containsOnly(5);
        assertThat(sent.get(0).packet().jobNumber()).isEqualTo(200);
    }

    @Test
    void answersARetransmissionAtItsOwnSourcePort() {
        harness.deliver(rank0, WORKER_PORT, 0, TestPackets.packet(SIZE, 1, 9, 0, 1, 0, 0, TestPackets.filled(64, 1)));
        harness.deliver(rank1, WORKER_PORT, 0, TestPackets.packet(SIZE, 1, 9, 0, 1, 0, 0, TestPackets.filled(64, 1)));
        harness.sink.drain();

        NextStep step = harness.deliver(rank0, WORKER_PORT + 3, 0,
                TestPackets.packet(SIZE, 1, 9, 0, 1, 0, 0, TestPackets.filled(64, 1)));

        assertThat(step).isEqualTo(NextStep.UNICAST);
        assertThat(harness.sink.drain()).extracting(RecordingSink.Sent::recipient)
                .containsExactly(new InetSocketAddress(rank0, WORKER_PORT + 3));
    }

    @Test
    void anExactEntryOfAnotherJobWinsOverTheAddress() {
        JobSpec exact = harness.install(new JobSpec(8, "ours", SIZE, 16, 1, List.of(WorkerEndpoint.of(rank0, 5000)), false));

        NextStep step = harness.deliver(rank0, 5000, 0, TestPackets.packet(SIZE, exact.jobNumber(), 1, 0, 0, 0, 0,
                TestPackets.filled(64, 4)));

        assertThat(step).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.sink.drain()).extracting(RecordingSink.Sent::recipient)
                .containsExactly(new InetSocketAddress(rank0, 5000));
    }

    @Test
    void twoRanksCannotShareAnAddress() {
        assertThatThrownBy(() -> new JobSpec(9, "shared", SIZE, 1, 1,
                List.of(WorkerEndpoint.matchedByAddress(rank0), WorkerEndpoint.matchedByAddress(rank0)), false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("need an address each");
    }

    @Test
    void anAddressCannotBeInTwoJobsByAddressAlone() {
        assertThatThrownBy(() -> harness.install(new JobSpec(9, "again", SIZE, 1, 1,
                List.of(WorkerEndpoint.matchedByAddress(rank1)), false)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(":any port of job 9 already belongs to job 7");
    }
}
