package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.OneRound;
import io.switchml.protocol.PayloadSize;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The per-packet path allocates nothing, in steady state, for any outcome. */
class SwitchProgramAllocationTest {
    private static final int WORKERS = 4;
    private static final int SLOTS = 16;

    private long sends;

    @Test
    void processingPacketsAllocatesNothing() {
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
        warmUp(rounds);
        long sentBefore = sends;
        long allocated = allocatedBy(rounds);

        assertThat(sends - sentBefore).isEqualTo(200 * SLOTS * (WORKERS + 1));
        // 19,200 packets; a few bytes of slack for the measurement itself.
        assertThat(allocated).isLessThan(1024);
    }

    @Test
    void oneRoundPacketsAllocateNothingEither() {
        ControlPlane controlPlane = new ControlPlane();
        JobSpec plain = TestJobs.job(1, WORKERS, PayloadSize.B1024, SLOTS, 1, true);
        JobSpec job = new JobSpec(1, "one-round", PayloadSize.B1024, SLOTS, 1, plain.endpoints(), true, 256);
        controlPlane.installJob(job);
        SwitchProgram program = new SwitchProgram(controlPlane, 1, new DropSimulator(new DropProbabilities(0.0, 0.0), 1),
                new SwitchCounters(), (recipient, packet) -> ++sends > 0);
        int[] sources = new int[WORKERS];
        for (int rank = 0; rank < WORKERS; rank++) {
            sources[rank] = Ipv4.toInt(job.endpoints().get(rank).address());
        }
        // One template per rank, copied into the datagram before each send (the switch writes its result over it).
        ByteBuffer[] templates = new ByteBuffer[WORKERS];
        for (int rank = 0; rank < WORKERS; rank++) {
            templates[rank] = ByteBuffer.allocate(AggregationPacket.bytesFor(200));
            AggregationPacket p = new AggregationPacket().wrap(templates[rank], 0).header(job.size(), 1, 0, 0, 0, 0, 0);
            p.oneRound(true);
            OneRound.writeTag(p, 0x1234);
            for (int i = 0; i < 200; i++) {
                p.element(i, Float.floatToRawIntBits((rank + 1) * (i - 100) * 0.37f));
            }
        }
        ByteBuffer datagram = ByteBuffer.allocate(templates[0].capacity());
        AggregationPacket header = new AggregationPacket().wrap(datagram, 0);
        int[] round = new int[SLOTS];

        Runnable rounds = () -> {
            for (int r = 0; r < 200; r++) {
                for (int slot = 0; slot < SLOTS; slot++) {
                    int tsi = round[slot]++;
                    for (int rank = 0; rank <= WORKERS; rank++) { // the last one resends rank 0's: answered from the result
                        datagram.put(0, templates[rank % WORKERS], 0, datagram.capacity());
                        header.tsi(tsi).poolIndex(slot, tsi & 1);
                        program.process(sources[rank % WORKERS], TestJobs.FIRST_WORKER_PORT, 0, datagram);
                    }
                }
            }
        };
        warmUp(rounds);
        long sentBefore = sends;
        long resultsBefore = program.counters().get(SwitchCounter.ONE_ROUND_RESULTS);
        long allocated = allocatedBy(rounds);

        assertThat(sends - sentBefore).isEqualTo(200L * SLOTS * (WORKERS + 1));
        assertThat(program.counters().get(SwitchCounter.ONE_ROUND_RESULTS) - resultsBefore).isEqualTo(200L * SLOTS);
        assertThat(allocated).isLessThan(1024);
    }

    /** A leaf's job: forwarding partials, re-forwarding them, installing the spine's results. */
    @Test
    void aLeafsUplinkAllocatesNothingEither() {
        ControlPlane controlPlane = new ControlPlane();
        JobSpec job = TestJobs.job(1, WORKERS, PayloadSize.B1024, SLOTS, 1, true);
        int spine = Ipv4.toInt(TestJobs.address(9, 9));
        controlPlane.installJob(job, new UplinkSpec(Ipv4.toAddress(spine), new int[] {48864}, 3));
        SwitchProgram program = new SwitchProgram(controlPlane, 1, new DropSimulator(new DropProbabilities(0.0, 0.0), 1),
                new SwitchCounters(), (recipient, packet) -> ++sends > 0);
        int[] sources = new int[WORKERS];
        for (int rank = 0; rank < WORKERS; rank++) {
            sources[rank] = Ipv4.toInt(job.endpoints().get(rank).address());
        }
        ByteBuffer datagram = TestPackets.packet(job.size(), 1, 0, 0, 0, 0, 0, 1, 2, 3);
        AggregationPacket header = new AggregationPacket().wrap(datagram, 0);
        int[] round = new int[SLOTS];

        Runnable rounds = () -> {
            for (int r = 0; r < 200; r++) {
                for (int slot = 0; slot < SLOTS; slot++) {
                    int tsi = round[slot]++;
                    for (int rank = 0; rank <= WORKERS; rank++) { // the last one resends rank 0's: sent up again
                        header.jobNumber(1).tsi(tsi).poolIndex(slot, tsi & 1);
                        program.process(sources[rank % WORKERS], TestJobs.FIRST_WORKER_PORT, 0, datagram);
                    }
                    header.jobNumber(3).tsi(tsi).poolIndex(slot, tsi & 1);
                    program.process(spine, 48864, 0, datagram);
                    header.jobNumber(1).tsi(tsi).poolIndex(slot, tsi & 1);
                    program.process(sources[1], TestJobs.FIRST_WORKER_PORT, 0, datagram); // answered from the result
                }
            }
        };
        warmUp(rounds);
        long sentBefore = sends;
        long spineResultsBefore = program.counters().get(SwitchCounter.SPINE_RESULTS);
        long allocated = allocatedBy(rounds);

        // Per slot and round: two partials up, the result to every worker, one answer.
        assertThat(sends - sentBefore).isEqualTo(200L * SLOTS * (2 + WORKERS + 1));
        assertThat(program.counters().get(SwitchCounter.SPINE_RESULTS) - spineResultsBefore).isEqualTo(200L * SLOTS);
        assertThat(allocated).isLessThan(1024);
    }

    /**
     * Runs {@code rounds} until a run allocates nothing, for at most 60 s: class loading and compilation. The Vector
     * API's kernels box their vectors until C2 has compiled them where they are called, which on a loaded machine
     * takes longer than a fixed number of runs (50 were not always enough under a parallel build).
     */
    private static void warmUp(Runnable rounds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (allocatedBy(rounds) >= 1024 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
    }

    /** Bytes this thread allocates while running {@code rounds}. */
    private static long allocatedBy(Runnable rounds) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        rounds.run();
        return threads.getCurrentThreadAllocatedBytes() - before;
    }
}
