package io.switchml.dataplane;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Where the switch program's result datagrams go: the UDP port that received the packet, or a
 * recorder in tests.
 */
@FunctionalInterface
interface ResultSink {
    /**
     * Sends one result datagram to {@code recipient}.
     *
     * @param packet the packet being processed, rewritten in place into the result (bytes position
     *               to limit); valid only during the call, so a sink that keeps it must copy it
     * @return false when the datagram could not be queued (the port's send queue is full)
     */
    boolean send(InetSocketAddress recipient, ByteBuffer packet);

    /**
     * Sends the one-byte datagram that wakes a sleeping worker thread on the shared-memory port
     * (docs/ARCHITECTURE.md section 11). Best effort: a lost one is made up for by the worker's backstop.
     */
    default void wakeUp(InetSocketAddress recipient) {
    }
}
