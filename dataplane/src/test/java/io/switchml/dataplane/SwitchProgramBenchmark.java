package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.kernels.Kernels;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The switch's per-packet program on one core, without sockets: one operation is one valid
 * contribution of an installed job. Packets arrive as in real traffic: for each slot of the window
 * in turn, one packet from every worker, so every n-th packet completes a slot and its result is
 * multicast to the n workers (a sink that only counts stands in for the UDP port).
 *
 * <p>It runs in two modes: average time gives ns per packet; throughput, in the same time unit,
 * gives the secondary metric {@code process:elements} in elements per ns, i.e. 10^9 elements per
 * second on the one core the benchmark thread runs on.
 *
 * <p>{@code kernels} chooses the element loops ({@link Kernels}); {@code copy} is the reference: the same
 * payload bytes moved into an int array in bulk, what memory alone costs per element. The fork gets
 * the Vector API's module, as the switch's JVM does.
 *
 * <p>This class sits in the dataplane's package (split across jars on the class path) because the
 * switch program and its control plane are package-private: the benchmark drives them without
 * widening the dataplane's API.
 */
@State(Scope.Thread)
@BenchmarkMode({Mode.AverageTime, Mode.Throughput})
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "--add-modules=jdk.incubator.vector")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class SwitchProgramBenchmark {
    /** The workers' default window: the slots a job keeps in flight. */
    static final int SLOTS = 64;
    static final int JOB = 1;
    static final int WORKER_PORT = 40000;

    @Param({"2", "8"})
    int workers;

    /** 64 and 256: SwitchML's 256 B and 1 KiB payloads; 15360: the largest, 60 KiB for loopback. */
    @Param({"64", "256", "15360"})
    int elements;

    @Param({"scalar", "array", "vector"})
    String kernels;

    SwitchProgram program;
    /** The reference's scratch: one payload's bytes. */
    byte[] copied;
    SwitchCounters counters;
    /** Each worker's IPv4 address, as the worker table keys it. */
    int[] sources;
    /** packets[slot][rank]: worker rank's contribution to the slot, rewritten in place when it completes the slot. */
    ByteBuffer[][] packets;
    final AggregationPacket header = new AggregationPacket();
    /** Results handed to the sink. */
    long sent;

    /** The next packet: from worker {@code rank} for {@code slot}, in the slot's round {@code round}. */
    int rank;
    int slot;
    int round;

    @Setup
    public void setUp() {
        PayloadSize size = PayloadSize.ofElements(elements);
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        sources = new int[workers];
        for (int r = 0; r < workers; r++) {
            sources[r] = 10 << 24 | 1 << 8 | r;
            endpoints.add(WorkerEndpoint.of(Ipv4.toAddress(sources[r]), WORKER_PORT));
        }
        ControlPlane controlPlane = new ControlPlane();
        // Round numbers on, as this project's workers send them: the round checker runs too.
        controlPlane.installJob(new JobSpec(JOB, "jmh", size, SLOTS, 1, endpoints));
        counters = new SwitchCounters();
        program = new SwitchProgram(controlPlane, 1, new DropSimulator(new DropProbabilities(0.0, 0.0), 1), counters,
                this::send, Kernels.choose(kernels).create(PayloadSize.B61440.elements()));
        copied = new byte[elements * Integer.BYTES];
        packets = new ByteBuffer[SLOTS][workers];
        for (int s = 0; s < SLOTS; s++) {
            for (int r = 0; r < workers; r++) {
                packets[s][r] = contribution(size, s, r);
            }
        }
    }

    /** Payload element i of worker r's packet for slot s: (r + 1) * (i + 1) + s. Exponent e0 = r - 20. */
    static int value(int slot, int rank, int i) {
        return (rank + 1) * (i + 1) + slot;
    }

    private ByteBuffer contribution(PayloadSize size, int s, int r) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(size.packetBytes()).order(ByteOrder.BIG_ENDIAN);
        AggregationPacket packet = new AggregationPacket().wrap(buffer, 0).header(size, JOB, 0, s, 0, r - 20, 0);
        for (int i = 0; i < elements; i++) {
            packet.element(i, value(s, r, i));
        }
        return buffer;
    }

    private boolean send(InetSocketAddress recipient, ByteBuffer result) {
        sent++;
        return true;
    }

    /**
     * Elements carried by the processed packets. JMH reports them per time unit in throughput mode
     * and as time per element in average-time mode.
     */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Elements {
        public long elements;

        @Setup(Level.Iteration)
        public void reset() {
            elements = 0;
        }
    }

    @Benchmark
    public NextStep process(Elements carried) {
        carried.elements += elements;
        ByteBuffer packet = packets[slot][rank];
        // What the worker stamps on each packet: the slot's round as the tsi, its parity as the set.
        header.wrap(packet, 0).tsi(round).poolIndex(slot, round & 1);
        NextStep step = program.process(sources[rank], WORKER_PORT, 0, packet);
        advance();
        return step;
    }

    /** The reference: one packet's payload moved in bulk, as a memcpy would; nothing added. */
    @Benchmark
    public byte[] copy(Elements carried) {
        carried.elements += elements;
        packets[slot][rank].get(AggregationPacket.bytesFor(0), copied, 0, copied.length);
        advance();
        return copied;
    }

    private void advance() {
        if (++rank < workers) {
            return;
        }
        rank = 0;
        if (++slot < SLOTS) {
            return;
        }
        slot = 0;
        round++;
    }
}
