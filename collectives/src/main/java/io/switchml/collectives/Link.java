package io.switchml.collectives;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * A TCP connection to one peer, a worker rank or a parameter server, in non-blocking mode. One
 * thread drives it through a {@link Poller}: it reads and writes what it can, states with
 * {@link #want} what it waits for, and the poller sleeps until the socket is ready. A closed or
 * broken connection is reported as a {@link LinkFailure} naming the peer.
 */
final class Link implements AutoCloseable {
    private final SocketChannel channel;
    private final String peer;
    private final List<Integer> peerRanks;
    private SelectionKey key;
    private int wanted;
    /** Where the bytes written are counted, or null when they are not (a link inside one process). */
    private LongAdder sent;

    /**
     * @param peer      how messages name the peer, e.g. {@code rank 2 (10.0.0.3:7000)}
     * @param peerRank  the peer's worker rank, or -1 for a server
     */
    Link(SocketChannel channel, String peer, int peerRank) {
        this.channel = channel;
        this.peer = peer;
        this.peerRanks = peerRank >= 0 ? List.of(peerRank) : List.of();
    }

    String peer() {
        return peer;
    }

    /** The peer's worker rank as a one-element list, or empty for a server. */
    List<Integer> peerRanks() {
        return peerRanks;
    }

    SocketChannel channel() {
        return channel;
    }

    void attach(SelectionKey key) {
        this.key = key;
    }

    /** Counts every byte written from now on into {@code counter} (bytes on the wire, for the bench). */
    Link countSentInto(LongAdder counter) {
        this.sent = counter;
        return this;
    }

    /** Reads what has arrived, up to dst's limit, without blocking. */
    int read(ByteBuffer dst) throws LinkFailure {
        int n;
        try {
            n = channel.read(dst);
        } catch (IOException e) {
            throw failed(e);
        }
        if (n < 0) {
            throw new LinkFailure(peer + " closed the connection", peerRanks, null);
        }
        return n;
    }

    /** Writes what the socket takes without blocking. */
    int write(ByteBuffer src) throws LinkFailure {
        int n;
        try {
            n = channel.write(src);
        } catch (IOException e) {
            throw failed(e);
        }
        if (sent != null && n > 0) {
            sent.add(n);
        }
        return n;
    }

    /** Wakes the next {@link Poller#await} when the socket becomes ready for these operations. */
    void want(int ops) {
        wanted |= ops;
    }

    void wantRead() {
        want(SelectionKey.OP_READ);
    }

    void wantWrite() {
        want(SelectionKey.OP_WRITE);
    }

    /** Hands what was wanted since the last wait to the selector, and starts afresh. */
    void applyInterest() {
        if (key != null && key.isValid()) {
            key.interestOps(wanted);
        }
        wanted = 0;
    }

    private LinkFailure failed(IOException e) {
        return new LinkFailure("the connection to " + peer + " failed: " + e.getMessage(), peerRanks, e);
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Nothing to do: the peer sees the connection end either way.
        }
    }

    @Override
    public String toString() {
        return peer;
    }
}
