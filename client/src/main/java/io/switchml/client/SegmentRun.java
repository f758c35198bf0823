package io.switchml.client;

import io.switchml.udp.RunShape;
import io.switchml.udp.UdpOffloads;

/**
 * The packets of a burst that can go as one UDP GSO datagram ({@link RunShape}: packets of one length, the last
 * possibly shorter), in whichever window slots they sit: a window's first packets, which carry exponents only, go
 * as one run as well as full ones do. The kernel cuts the datagram into the packets, so the switch receives the
 * same packets as if each were sent alone (docs/ARCHITECTURE.md section 17).
 */
final class SegmentRun {
    private final RunShape shape = new RunShape();
    private final int[] slots = new int[UdpOffloads.MAX_SEGMENTS];

    /**
     * Adds slot {@code slot}'s packet of {@code length} bytes to the run; false, changing nothing, when it cannot
     * join the packets already in it (the caller sends the run and starts a new one).
     */
    boolean add(int slot, int length) {
        int at = shape.count();
        if (!shape.add(length)) {
            return false;
        }
        slots[at] = slot;
        return true;
    }

    boolean isEmpty() {
        return shape.isEmpty();
    }

    /** The slot of the run's {@code i}-th packet. */
    int slot(int i) {
        return slots[i];
    }

    /** The length of the run's {@code i}-th packet: the first's, but for a shorter last one. */
    int length(int i) {
        return i < shape.count() - 1 ? shape.segmentBytes() : shape.bytes() - (shape.count() - 1) * shape.segmentBytes();
    }

    /** Packets in the run. */
    int count() {
        return shape.count();
    }

    /** The first packet's length, at which the kernel cuts the run. */
    int segmentBytes() {
        return shape.segmentBytes();
    }

    /** The run's bytes in all. */
    int bytes() {
        return shape.bytes();
    }

    void clear() {
        shape.clear();
    }
}
