package io.switchml.dataplane;

import java.net.InetAddress;
import java.nio.ByteBuffer;

/** A switch program driven directly, without sockets, with its control plane, counters and a recording sink. */
final class SwitchHarness {
    final ControlPlane controlPlane = new ControlPlane();
    final DropProbabilities dropProbabilities = new DropProbabilities(0.0, 0.0);
    final SwitchCounters counters = new SwitchCounters();
    final RecordingSink sink = new RecordingSink();
    final int portCount;
    final SwitchProgram program;
    private int nextTsi = 1;

    SwitchHarness() {
        this(1);
    }

    SwitchHarness(int portCount) {
        this.portCount = portCount;
        this.program = new SwitchProgram(controlPlane, portCount, new DropSimulator(dropProbabilities, 42), counters, sink);
    }

    JobSpec install(JobSpec spec) {
        controlPlane.installJob(spec);
        return spec;
    }

    InstalledJob installed(int jobNumber) {
        return controlPlane.installedJob(jobNumber);
    }

    /** Worker {@code rank}'s packet for (slot, set), from its thread's port, to the port the slot belongs to. */
    NextStep contribute(JobSpec spec, int rank, int slot, int set, int e0, int e1, int... values) {
        return contributeWithTsi(spec, rank, slot, set, nextTsi++, e0, e1, values);
    }

    NextStep contributeWithTsi(JobSpec spec, int rank, int slot, int set, int tsi, int e0, int e1, int... values) {
        ByteBuffer packet = TestPackets.packet(spec.size(), spec.jobNumber(), tsi, slot, set, e0, e1, values);
        return fromWorker(spec, rank, slot, packet);
    }

    /** Sends {@code packet} the way worker {@code rank} sends slot {@code slot}: its thread's port, the slot's switch port. */
    NextStep fromWorker(JobSpec spec, int rank, int slot, ByteBuffer packet) {
        int thread = slot / spec.slotsPerThread();
        WorkerEndpoint endpoint = spec.endpoints().get(rank);
        return deliver(endpoint.address(), endpoint.port(thread), thread % portCount, packet);
    }

    NextStep deliver(InetAddress source, int sourcePort, int portIndex, ByteBuffer packet) {
        return program.process(Ipv4.toInt(source), sourcePort, portIndex, packet);
    }

    long count(SwitchCounter counter) {
        return counters.get(counter);
    }

    long count(DropReason reason) {
        return counters.get(reason);
    }
}
