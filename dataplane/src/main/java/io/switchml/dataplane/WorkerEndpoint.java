package io.switchml.dataplane;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Arrays;

/**
 * One ranked worker of a job as the switch sees it: its IPv4 address and the UDP source port of
 * each of its worker threads, in thread order. The switch identifies a worker by where its packets
 * come from (docs/ARCHITECTURE.md section 2), and replies to thread t's port.
 *
 * <p>A SwitchML worker is identified by its address alone ({@link #matchedByAddress}), as
 * SwitchML's UDP receiver table matches on the source address and not the port: its threads send
 * from ports the controller is never told, and the switch answers each packet at the port it came
 * from.
 *
 * @param address the worker's IPv4 address
 * @param ports   one UDP source port per worker thread, thread 0 first, 1..65535; for a worker
 *                matched by address alone, the single port {@link #ANY_PORT}. Threads may share a
 *                port: a leaf switch, a spine's worker, sends thread t's slots from its switch port
 *                t % P (docs/ARCHITECTURE.md section 9); the slot says which thread a packet is of
 * @param anyPort whether the worker is matched by its address alone, whatever its source port
 * @param leaf    whether the worker is a leaf switch under this one (docs/ARCHITECTURE.md section 9): its
 *                ports are its switch ports, which it sends every hierarchical job's partials from, so
 *                several jobs may list them; the switch tells those jobs apart by the header's job number
 */
public record WorkerEndpoint(InetAddress address, int[] ports, boolean anyPort, boolean leaf) {
    /** The worker-table port of a worker matched by its address alone (no UDP packet comes from port 0). */
    public static final int ANY_PORT = 0;

    /** A worker whose threads send from these ports. */
    public WorkerEndpoint(InetAddress address, int[] ports) {
        this(address, ports, false);
    }

    /** A worker that is no leaf switch. */
    public WorkerEndpoint(InetAddress address, int[] ports, boolean anyPort) {
        this(address, ports, anyPort, false);
    }

    public WorkerEndpoint {
        if (anyPort && leaf) {
            throw new IllegalArgumentException("a leaf switch is matched by its ports, not by its address alone");
        }
        if (address == null) {
            throw new IllegalArgumentException("worker address is null");
        }
        if (!(address instanceof Inet4Address)) {
            throw new IllegalArgumentException("worker address " + address.getHostAddress()
                    + " is not IPv4; the worker table keys on IPv4 addresses");
        }
        if (ports == null || ports.length == 0) {
            throw new IllegalArgumentException("worker " + address.getHostAddress() + " has no ports; it needs one per worker thread");
        }
        ports = ports.clone();
        if (anyPort && (ports.length != 1 || ports[0] != ANY_PORT)) {
            throw new IllegalArgumentException("worker " + address.getHostAddress() + " is matched by address alone"
                    + " and has the one port " + ANY_PORT + ", not " + Arrays.toString(ports));
        }
        for (int i = 0; i < ports.length && !anyPort; i++) {
            if (ports[i] < 1 || ports[i] > 65535) {
                throw new IllegalArgumentException("port " + ports[i] + " of worker " + address.getHostAddress()
                        + " thread " + i + " is outside 1..65535");
            }
        }
    }

    /** Convenience for the common case of one address and its thread ports. */
    public static WorkerEndpoint of(InetAddress address, int... ports) {
        return new WorkerEndpoint(address, ports);
    }

    /** A leaf switch whose thread t sends from {@code ports[t]}, ports that several jobs may share. */
    public static WorkerEndpoint leafSwitch(InetAddress address, int... ports) {
        return new WorkerEndpoint(address, ports, false, true);
    }

    /** A worker of one thread matched by its source address whatever its source port (SwitchML's workers). */
    public static WorkerEndpoint matchedByAddress(InetAddress address) {
        return new WorkerEndpoint(address, new int[] {ANY_PORT}, true);
    }

    /** A copy of the ports: the record stays immutable. */
    @Override
    public int[] ports() {
        return ports.clone();
    }

    /** Thread {@code thread}'s port, without copying the array. */
    public int port(int thread) {
        return ports[thread];
    }

    /** Number of worker threads (ports). */
    public int threads() {
        return ports.length;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof WorkerEndpoint that && address.equals(that.address) && Arrays.equals(ports, that.ports)
                && anyPort == that.anyPort && leaf == that.leaf;
    }

    @Override
    public int hashCode() {
        return 31 * address.hashCode() + Arrays.hashCode(ports);
    }

    @Override
    public String toString() {
        return address.getHostAddress() + (anyPort ? "[any port]" : Arrays.toString(ports)) + (leaf ? " (leaf switch)" : "");
    }
}
