package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.PayloadSize;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The per-packet path allocates nothing, in steady state, for any outcome. */
class SwitchProgramAllocationTest {
    private static final int WORKERS = 4;
    private static final int SLOTS = 16;

    private long sends;

    @Test
    void processingPacketsAllocatesNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        ControlPlane controlPlane = new ControlPlane();
        JobSpec job = TestJobs.job(1, WORKERS, PayloadSize.B1024, SLOTS, 1);
        controlPlane.installJob(job);
        SwitchProgram program = new SwitchProgram(controlPlane, 1, new DropSimulator(new DropProbabilities(0.0, 0.0), 1),
                new SwitchCounters(), (recipient, packet) -> ++sends > 0);
        int[] sources = new int[WORKERS];
        for (int rank = 0; rank < WORKERS; rank++) {
            sources[rank] = Ipv4.toInt(job.endpoints().get(rank).address());
        }
        ByteBuffer[][][] packets = new ByteBuffer[2][SLOTS][WORKERS];
        for (int set = 0; set < 2; set++) {
            for (int slot = 0; slot < SLOTS; slot++) {
                for (int rank = 0; rank < WORKERS; rank++) {
                    packets[set][slot][rank] = TestPackets.packet(job.size(), 1, slot, slot, set, rank, 0, rank, slot);
                }
            }
        }
        ByteBuffer garbage = ByteBuffer.allocate(5);

        Runnable rounds = () -> {
            for (int round = 0; round < 200; round++) {
                int set = round & 1;
                for (int slot = 0; slot < SLOTS; slot++) {
                    for (int rank = 0; rank < WORKERS; rank++) {
                        program.process(sources[rank], TestJobs.FIRST_WORKER_PORT, 0, packets[set][slot][rank]);
                    }
                    program.process(sources[0], TestJobs.FIRST_WORKER_PORT, 0, packets[set][slot][0]); // retransmission
                    program.process(sources[0], 9, 0, garbage);
                }
            }
        };
        rounds.run(); // warm up: class loading and compilation

        long before = threads.getCurrentThreadAllocatedBytes();
        rounds.run();
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;

        assertThat(sends).isEqualTo(2 * 200 * SLOTS * (WORKERS + 1));
        // 19,200 packets; a few bytes of slack for the measurement itself.
        assertThat(allocated).isLessThan(1024);
    }
}
