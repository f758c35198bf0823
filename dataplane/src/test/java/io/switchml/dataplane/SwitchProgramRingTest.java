package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.PayloadSize;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Records of the shared-memory port are taken only in the name of workers that read their results there: the
 * ring's identity field is whatever its writer wrote (security round 4, finding 7).
 */
class SwitchProgramRingTest {
    private static final PayloadSize SIZE = PayloadSize.B256;

    @TempDir
    Path dir;

    @Test
    void aRecordInTheNameOfAWorkerThatUsesUdpIsDroppedAndCounted() {
        try (IpcDirectory ipc = IpcDirectory.create(dir.toString(), 1)) {
            ControlPlane controlPlane = new ControlPlane(SwitchConfig.DEFAULT_POOL_SLOTS, SwitchConfig.DEFAULT_POOL_SLOTS,
                    SwitchConfig.defaultPoolBytes(), SwitchConfig.DEFAULT_ONE_ROUND_STAGING_BYTES, ipc);
            JobSpec job = TestJobs.job(1, 2, SIZE, 4, 1, true);
            controlPlane.installJob(job);
            RecordingSink sink = new RecordingSink();
            SwitchProgram program = new SwitchProgram(controlPlane, 1, new DropSimulator(new DropProbabilities(0.0, 0.0), 1),
                    new SwitchCounters(), sink);
            int rank0 = Ipv4.toInt(job.endpoints().get(0).address());
            int rank1 = Ipv4.toInt(job.endpoints().get(1).address());
            int port = TestJobs.FIRST_WORKER_PORT;

            // Nobody reads on the board yet: a ring record for rank 0 is a forgery.
            assertThat(program.processFromRing(rank0, port, 0, TestPackets.packet(SIZE, 1, 0, 0, 0, 0, 0, 5)))
                    .isEqualTo(NextStep.DROP);
            assertThat(program.counters().get(DropReason.NOT_A_RING_WORKER)).isEqualTo(1);
            assertThat(program.counters().get(SwitchCounter.CONTRIBUTIONS)).isZero();

            // Rank 0 attaches (as its SwitchSession does before its first packet); rank 1 stays on UDP.
            controlPlane.tables().job(1).ipcFiles().results().attach(0);
            assertThat(program.processFromRing(rank0, port, 0, TestPackets.packet(SIZE, 1, 0, 0, 0, 0, 0, 5)))
                    .isEqualTo(NextStep.CONSUME);
            assertThat(program.processFromRing(rank1, port, 0, TestPackets.packet(SIZE, 1, 0, 0, 0, 0, 0, 7)))
                    .isEqualTo(NextStep.DROP);
            assertThat(program.counters().get(DropReason.NOT_A_RING_WORKER)).isEqualTo(2);
            // Rank 1's own datagram completes the slot: 5 + 7.
            assertThat(program.process(rank1, port, 0, TestPackets.packet(SIZE, 1, 0, 0, 0, 0, 0, 7)))
                    .isEqualTo(NextStep.MULTICAST);
            assertThat(program.counters().get(SwitchCounter.CONTRIBUTIONS)).isEqualTo(2);
        }
    }
}
