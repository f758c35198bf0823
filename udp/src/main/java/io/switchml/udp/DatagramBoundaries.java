package io.switchml.udp;

import io.netty.buffer.ByteBuf;

/**
 * Which of the packets a channel hands on begin a datagram, for counting datagrams as the socket received them. A
 * GRO channel reads each (coalesced) datagram into a buffer of its own and hands on its packets as adjacent slices
 * of it ({@link UdpOffloads}): a packet that starts where the previous one ended continues that datagram. Buffers
 * are larger than any datagram, so the next datagram never starts where the last one ended. Without GRO, or where
 * a buffer has no address, every packet is a datagram.
 */
public final class DatagramBoundaries {
    private final boolean coalescing;
    /** Where the previous packet ended; -1 when unknown. */
    private long end = -1;

    /** @param coalescing whether the channel receives with GRO */
    public DatagramBoundaries(boolean coalescing) {
        this.coalescing = coalescing;
    }

    /** Whether {@code packet} (its readable bytes) begins a datagram rather than continuing the previous one. */
    public boolean begins(ByteBuf packet) {
        if (!coalescing || !packet.hasMemoryAddress()) {
            return true;
        }
        long start = packet.memoryAddress() + packet.readerIndex();
        boolean continues = start == end;
        end = start + packet.readableBytes();
        return !continues;
    }
}
