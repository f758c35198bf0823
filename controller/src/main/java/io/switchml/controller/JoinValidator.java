package io.switchml.controller;

import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** Checks a join request on its own; returns what is wrong with it, or null. */
final class JoinValidator {
    /** The longest a rank may ask the controller to wait for the others. */
    static final int MAX_TIMEOUT_MS = 3_600_000;
    static final int MAX_JOB_NAME = 200;

    private JoinValidator() {
    }

    static String problem(JoinRequest request) {
        if (request.getJobName().isEmpty() || request.getJobName().length() > MAX_JOB_NAME) {
            return "job name must have 1.." + MAX_JOB_NAME + " characters";
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
        if (ipv4(request.getAddress()) == null) {
            return "address '" + request.getAddress() + "' is not an IPv4 address";
        }
        return null;
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
