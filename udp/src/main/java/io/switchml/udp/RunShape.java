package io.switchml.udp;

/**
 * Which datagrams may share one segmented datagram (UDP GSO), the one rule both sides follow: datagrams of the
 * first's length, the last possibly shorter, at most {@link UdpOffloads#MAX_SEGMENTS} of them and
 * {@link UdpOffloads#MAX_DATAGRAM_BYTES} bytes in all. The kernel cuts such a datagram at the first's length, so
 * the receiver gets exactly those datagrams (or, with UDP GRO, the run whole). Holds the run's shape, not its bytes.
 */
public final class RunShape {
    private int count;
    private int segmentBytes;
    private int bytes;

    /** Adds a datagram of {@code length} bytes; false, changing nothing, where it cannot join the run. */
    public boolean add(int length) {
        if (count == 0) {
            count = 1;
            segmentBytes = length;
            bytes = length;
            return true;
        }
        boolean lastWasShorter = bytes != count * segmentBytes;
        if (lastWasShorter || length > segmentBytes || count == UdpOffloads.MAX_SEGMENTS
                || bytes + length > UdpOffloads.MAX_DATAGRAM_BYTES) {
            return false;
        }
        count++;
        bytes += length;
        return true;
    }

    public boolean isEmpty() {
        return count == 0;
    }

    /** Datagrams in the run. */
    public int count() {
        return count;
    }

    /** The first datagram's length: where the kernel cuts. */
    public int segmentBytes() {
        return segmentBytes;
    }

    /** The run's bytes in all. */
    public int bytes() {
        return bytes;
    }

    public void clear() {
        count = 0;
        bytes = 0;
    }
}
