package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadSize;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The uplink block of a leaf switch (docs/ARCHITECTURE.md section 9): a locally complete slot goes
 * up to the spine, a retransmission while it waits sends it again, the spine's result is installed
 * and multicast, and stale or foreign packets from the spine are dropped.
 */
class SwitchProgramUplinkTest {
    private static final PayloadSize SIZE = PayloadSize.B128;
    private static final InetAddress SPINE = Ipv4.toAddress(10 << 24 | 9 << 16 | 1);
    private static final int SPINE_PORT = 48864;
    private static final int SPINE_JOB = 7;
    private static final int LEAF_JOB = 1;

    private final SwitchHarness harness = new SwitchHarness();
    private final JobSpec leafJob = TestJobs.job(LEAF_JOB, 2, SIZE, 2, 1, true);

    SwitchProgramUplinkTest() {
        harness.controlPlane.installJob(leafJob, new UplinkSpec(SPINE, new int[] {SPINE_PORT}, SPINE_JOB));
    }

    /** Both local workers' round {@code tsi} of slot 0 (set = tsi parity): 1, 2 and 10, 20. */
    private NextStep completeLocally(int tsi) {
        assertThat(harness.contributeWithTsi(leafJob, 0, 0, tsi & 1, tsi, 3, 0, 1, 2)).isEqualTo(NextStep.CONSUME);
        return harness.contributeWithTsi(leafJob, 1, 0, tsi & 1, tsi, 5, 0, 10, 20);
    }

    private NextStep fromSpine(int jobNumber, int tsi, int e0, int... values) {
        ByteBuffer packet = TestPackets.packet(SIZE, jobNumber, tsi, 0, tsi & 1, e0, 0, values);
        return harness.deliver(SPINE, SPINE_PORT, 0, packet);
    }

    private static void assertPartial(RecordingSink.Sent sent, int tsi) {
        assertThat(sent.recipient()).isEqualTo(new InetSocketAddress(SPINE, SPINE_PORT));
        AggregationPacket packet = sent.packet();
        assertThat(packet.jobNumber()).isEqualTo(SPINE_JOB);
        assertThat(packet.tsi()).isEqualTo(tsi);
        assertThat(packet.exponent0()).isEqualTo(5);
        assertThat(sent.elements()).startsWith(11, 22);
    }

    @Test
    void aLocallyCompleteSlotGoesUpToTheSpineAndNotToTheWorkers() {
        assertThat(completeLocally(0)).isEqualTo(NextStep.FORWARD);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(1);
        assertPartial(sent.get(0), 0);
        assertThat(harness.count(SwitchCounter.PARTIALS_FORWARDED)).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.RESULTS_SENT)).isZero();
        assertThat(harness.installed(LEAF_JOB).uplink().waiting(0, 0)).isTrue();
    }

    @Test
    void aRetransmissionWhileTheSlotWaitsSendsThePartialAgain() {
        completeLocally(0);
        harness.sink.drain();
        assertThat(harness.contributeWithTsi(leafJob, 0, 0, 0, 0, 3, 0, 1, 2)).isEqualTo(NextStep.FORWARD);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(1);
        assertPartial(sent.get(0), 0);
        assertThat(harness.count(SwitchCounter.PARTIALS_FORWARDED)).isEqualTo(2);
    }

    @Test
    void theSpinesResultIsInstalledAndMulticastUnderTheLocalJobNumber() {
        completeLocally(0);
        harness.sink.drain();
        assertThat(fromSpine(SPINE_JOB, 0, 6, 100, 200)).isEqualTo(NextStep.MULTICAST);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).extracting(RecordingSink.Sent::recipient).containsExactlyElementsOf(TestJobs.recipients(leafJob, 0));
        for (RecordingSink.Sent result : sent) {
            assertThat(result.packet().jobNumber()).isEqualTo(LEAF_JOB);
            assertThat(result.packet().exponent0()).isEqualTo(6);
            assertThat(result.elements()).startsWith(100, 200);
        }
        assertThat(harness.count(SwitchCounter.SPINE_RESULTS)).isEqualTo(1);

        // A worker that missed it retransmits: answered from the installed global result, not sent up.
        assertThat(harness.contributeWithTsi(leafJob, 1, 0, 0, 0, 5, 0, 10, 20)).isEqualTo(NextStep.UNICAST);
        RecordingSink.Sent answer = harness.sink.drain().get(0);
        assertThat(answer.recipient()).isEqualTo(TestJobs.recipient(leafJob, 1, 0));
        assertThat(answer.elements()).startsWith(100, 200);
        assertThat(answer.packet().exponent0()).isEqualTo(6);
    }

    @Test
    void theNextRoundOfTheSlotAggregatesAfresh() {
        completeLocally(0);
        fromSpine(SPINE_JOB, 0, 6, 100, 200);
        assertThat(completeLocally(1)).isEqualTo(NextStep.FORWARD);
        assertThat(fromSpine(SPINE_JOB, 1, 7, 300, 400)).isEqualTo(NextStep.MULTICAST);
        assertThat(completeLocally(2)).isEqualTo(NextStep.FORWARD);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertPartial(sent.get(sent.size() - 1), 2);
    }

    @Test
    void staleResultsFromTheSpineAreDropped() {
        assertThat(fromSpine(SPINE_JOB, 0, 6, 100, 200)).as("nothing waits yet").isEqualTo(NextStep.DROP);
        completeLocally(0);
        harness.sink.drain();
        assertThat(fromSpine(SPINE_JOB, 2, 6, 100, 200)).as("another round").isEqualTo(NextStep.DROP);
        assertThat(fromSpine(SPINE_JOB, 0, 6, 100, 200)).isEqualTo(NextStep.MULTICAST);
        harness.sink.drain();
        assertThat(fromSpine(SPINE_JOB, 0, 9, 999, 999)).as("a duplicate").isEqualTo(NextStep.DROP);
        assertThat(harness.sink.drain()).isEmpty();
        assertThat(harness.count(DropReason.STALE_SPINE_RESULT)).isEqualTo(3);
        harness.contributeWithTsi(leafJob, 0, 0, 0, 0, 3, 0, 1, 2);
        assertThat(harness.sink.drain().get(0).elements()).as("the duplicate changed nothing").startsWith(100, 200);
    }

    @Test
    void packetsFromTheSpineOfAnotherJobOrPortAreForeign() {
        completeLocally(0);
        assertThat(fromSpine(SPINE_JOB + 1, 0, 6, 100, 200)).isEqualTo(NextStep.DROP);
        assertThat(harness.deliver(SPINE, SPINE_PORT + 1, 0,
                TestPackets.packet(SIZE, SPINE_JOB, 0, 0, 0, 6, 0, 100, 200))).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.UNKNOWN_SOURCE)).isEqualTo(2);
        assertThat(harness.installed(LEAF_JOB).uplink().waiting(0, 0)).isTrue();
    }

    @Test
    void removingTheJobRemovesItsUplink() {
        harness.controlPlane.removeJob(LEAF_JOB);
        assertThat(fromSpine(SPINE_JOB, 0, 6, 100, 200)).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.UNKNOWN_SOURCE)).isEqualTo(1);
        harness.controlPlane.installJob(leafJob, new UplinkSpec(SPINE, new int[] {SPINE_PORT}, SPINE_JOB));
    }

    @Test
    void aSpineJobFeedsOneLocalJob() {
        JobSpec other = TestJobs.job(2, 2, SIZE, 2, 1, true);
        assertThatThrownBy(() -> harness.controlPlane.installJob(other,
                new UplinkSpec(SPINE, new int[] {SPINE_PORT}, SPINE_JOB)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("already feeds local job 1");
    }

    @Test
    void aLeafJobNeedsRoundNumbersAndTwoRounds() {
        UplinkSpec uplink = new UplinkSpec(SPINE, new int[] {SPINE_PORT}, 3);
        assertThatThrownBy(() -> harness.controlPlane.installJob(TestJobs.job(3, 2, SIZE, 2, 1, false), uplink))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("round numbers");
        JobSpec oneRound = new JobSpec(3, "j", SIZE, 2, 1, TestJobs.job(3, 2, SIZE, 2, 1, true).endpoints(), true, 16);
        assertThatThrownBy(() -> harness.controlPlane.installJob(oneRound, uplink))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("two rounds");
    }

    /** The spine's side: a leaf is one worker whose threads share its switch ports. */
    @Test
    void aSpineTakesALeafWhoseThreadsShareOnePort() {
        SwitchHarness spine = new SwitchHarness(2);
        InetAddress leafA = TestJobs.address(5, 0);
        InetAddress leafB = TestJobs.address(5, 1);
        JobSpec spineJob = spine.install(new JobSpec(5, "spine", SIZE, 1, 2,
                List.of(WorkerEndpoint.of(leafA, 48864, 48864), WorkerEndpoint.of(leafB, 48864, 48864))));
        for (int slot = 0; slot < 2; slot++) {
            assertThat(spine.contributeWithTsi(spineJob, 0, slot, 0, 0, 0, 0, 1)).isEqualTo(NextStep.CONSUME);
            assertThat(spine.contributeWithTsi(spineJob, 1, slot, 0, 0, 0, 0, 2)).isEqualTo(NextStep.MULTICAST);
        }
        assertThat(spine.sink.drain()).extracting(RecordingSink.Sent::recipient).containsExactly(
                new InetSocketAddress(leafA, 48864), new InetSocketAddress(leafB, 48864),
                new InetSocketAddress(leafA, 48864), new InetSocketAddress(leafB, 48864));
        assertThatThrownBy(() -> new JobSpec(6, "clash", SIZE, 1, 2,
                List.of(WorkerEndpoint.of(leafA, 48864, 48864), WorkerEndpoint.of(leafA, 48864, 48864))))
                .hasMessageContaining("appears twice");
    }
}
