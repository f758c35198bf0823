package io.switchml.client;

import io.switchml.udp.UdpOffloads;

/**
 * A run of a burst's packets that can go as one UDP GSO datagram: consecutive window slots, whose
 * packets sit back to back in the engine's send memory, all of the full packet size but the last.
 * The kernel cuts such a datagram into the packets at the segment size, so the switch receives the
 * same datagrams as if each were sent alone (docs/ARCHITECTURE.md section 13).
 */
final class SegmentRun {
    static final int MAX_SEGMENTS = UdpOffloads.MAX_SEGMENTS;
    static final int MAX_BYTES = UdpOffloads.MAX_DATAGRAM_BYTES;

    private final int segmentBytes;
    private int first;
    private int count;
    private int bytes;

    /** @param segmentBytes the full packet size: each segment but the last has exactly these bytes */
    SegmentRun(int segmentBytes) {
        this.segmentBytes = segmentBytes;
    }

    /**
     * Adds slot {@code slot}'s packet of {@code length} bytes to the run; false, changing nothing, when it
     * cannot follow the packets already in it (the caller sends the run and starts a new one).
     */
    boolean add(int slot, int length) {
        if (count == 0) {
            first = slot;
            count = 1;
            bytes = length;
            return true;
        }
        boolean follows = slot == first + count && bytes == count * segmentBytes; // no short packet before it
        if (!follows || count == MAX_SEGMENTS || bytes + length > MAX_BYTES) {
            return false;
        }
        count++;
        bytes += length;
        return true;
    }

    boolean isEmpty() {
        return count == 0;
    }

    /** The run's first slot. */
    int first() {
        return first;
    }

    /** Packets in the run. */
    int count() {
        return count;
    }

    /** The run's bytes, from the first slot's packet to the end of the last's. */
    int bytes() {
        return bytes;
    }

    int segmentBytes() {
        return segmentBytes;
    }

    void clear() {
        count = 0;
        bytes = 0;
    }
}
