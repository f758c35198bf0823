package io.switchml.controller;

import io.switchml.control.JobNames;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;

import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/** Checks a join request on its own; returns what is wrong with it, or null. */
final class JoinValidator {
    /** The longest a rank may ask the controller to wait for the others. */
    static final int MAX_TIMEOUT_MS = 3_600_000;
    /** How long the host's broadcast addresses are trusted before they are read again (interfaces come and go). */
    private static final long BROADCASTS_VALID_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static volatile LocalBroadcasts localBroadcasts = LocalBroadcasts.read();

    private JoinValidator() {
    }

    static String problem(JoinRequest request) {
        String badName = JobNames.problem(request.getJobName());
        if (badName != null) {
            return "job name " + badName;
        }
        JobParameters p = request.getParameters();
        int n = p.getNumWorkers();
        if (n < 1 || n > ProtocolConstants.MAX_WORKERS) {
            return "num_workers " + Integer.toUnsignedString(n) + " outside 1.." + ProtocolConstants.MAX_WORKERS;
        }
        // uint32 fields arrive as Java ints: values of 2^31 and above are negative.
        if (request.getRank() < 0 || request.getRank() >= n) {
            return "rank " + Integer.toUnsignedString(request.getRank()) + " outside 0.." + (n - 1);
        }
        try {
            PayloadSize.ofElements(p.getElementsPerPacket());
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        if (p.getThreads() < 1 || p.getThreads() > ProtocolConstants.SWITCH_UDP_PORT_COUNT) {
            return "threads " + Integer.toUnsignedString(p.getThreads()) + " outside 1.." + ProtocolConstants.SWITCH_UDP_PORT_COUNT;
        }
        if (p.getSlotsPerThread() < 1 || (long) p.getSlotsPerThread() * p.getThreads() > ProtocolConstants.MAX_SLOTS) {
            return "slots_per_thread x threads = " + (long) p.getSlotsPerThread() * p.getThreads() + " outside 1.."
                    + ProtocolConstants.MAX_SLOTS;
        }
        if (p.getOneRoundElements() < 0) {
            return "one_round_elements " + Integer.toUnsignedString(p.getOneRoundElements()) + " above "
                    + Integer.MAX_VALUE;
        }
        if (request.getPortsCount() != p.getThreads()) {
            return request.getPortsCount() + " UDP ports given for " + p.getThreads() + " threads";
        }
        for (int port : request.getPortsList()) {
            if (port < 1 || port > 65535) {
                return "UDP port " + Integer.toUnsignedString(port) + " outside 1..65535";
            }
        }
        if (request.getTimeoutMs() < 1 || request.getTimeoutMs() > MAX_TIMEOUT_MS) {
            return "timeout_ms " + Integer.toUnsignedString(request.getTimeoutMs()) + " outside 1.." + MAX_TIMEOUT_MS;
        }
        InetAddress address = ipv4(request.getAddress());
        if (address == null) {
            return "address '" + request.getAddress() + "' is not an IPv4 address";
        }
        String notUnicast = notUnicast(address);
        if (notUnicast != null) {
            return "address " + request.getAddress() + " " + notUnicast + ": the switch sends the rank's results to its"
                    + " address, so it must be the worker's own unicast address (the worker's switchml.localAddress, or"
                    + " the address that routes to the switch)";
        }
        return null;
    }

    /**
     * Why {@code address} cannot be one worker's, or null when it can. The switch sends a worker's
     * results to its address: a broadcast or multicast one would send them to every host there, and
     * 0.0.0.0 to none. A subnet's broadcast address is known only for the networks of this host.
     */
    static String notUnicast(InetAddress address) {
        byte[] bytes = address.getAddress();
        int first = bytes[0] & 0xff;
        if (first == 0) {
            return "is in 0.0.0.0/8 (\"this network\", 0.0.0.0 the unspecified address), which is no host's";
        }
        if (address.isMulticastAddress()) {
            return "is a multicast address (224.0.0.0/4)";
        }
        if (first == 127 && bytes[1] == -1 && bytes[2] == -1 && bytes[3] == -1) {
            return "is the broadcast address of the loopback network 127.0.0.0/8";
        }
        if (first >= 240) {
            return (first == 255 && bytes[1] == -1 && bytes[2] == -1 && bytes[3] == -1)
                    ? "is the broadcast address 255.255.255.255" : "is in the reserved 240.0.0.0/4";
        }
        LocalBroadcasts known = localBroadcasts;
        if (System.nanoTime() - known.readAt() > BROADCASTS_VALID_NANOS) {
            known = LocalBroadcasts.read();
            localBroadcasts = known;
        }
        if (known.addresses().contains(address)) {
            return "is the broadcast address of a network of the switch's host";
        }
        return null;
    }

    /** The broadcast addresses of this host's IPv4 networks, and when they were read. */
    private record LocalBroadcasts(Set<InetAddress> addresses, long readAt) {
        static LocalBroadcasts read() {
            Set<InetAddress> found = new HashSet<>();
            try {
                for (NetworkInterface nic : NetworkInterface.networkInterfaces().toList()) {
                    for (InterfaceAddress a : nic.getInterfaceAddresses()) {
                        if (a.getBroadcast() != null) {
                            found.add(a.getBroadcast());
                        }
                    }
                }
            } catch (SocketException e) {
                // Without the list, the other checks still hold; the next read tries again.
            }
            return new LocalBroadcasts(Set.copyOf(found), System.nanoTime());
        }
    }

    /** The IPv4 address written in dotted form, or null; never does a DNS lookup. */
    static InetAddress ipv4(String text) {
        if (!text.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            return null;
        }
        // Parsed here: InetAddress.getByName would resolve a non-address such as 10.0.0.256 as a host name.
        String[] octets = text.split("\\.");
        byte[] bytes = new byte[4];
        for (int i = 0; i < 4; i++) {
            int octet = Integer.parseInt(octets[i]);
            if (octet > 255) {
                return null;
            }
            bytes[i] = (byte) octet;
        }
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new AssertionError("4 bytes are always an IPv4 address", e);
        }
    }
}
