package io.switchml.collectives;

import io.switchml.api.MismatchedOperationException;
import io.switchml.api.ReduceOp;

import java.nio.ByteBuffer;

/**
 * The fixed-size header in front of every message between workers and servers: what the message is,
 * the sender's operation number, and a length. Peers compare headers to catch workers that do not
 * run the same sequence of operations before any data is mixed up.
 *
 * @param kind     one of the constants below
 * @param detail   element type and reduce op of an all-reduce, the root of a broadcast, the origin and reduce op
 *                 of an all-gather block
 * @param sequence the sender's operation number: all-reduces, barriers and broadcasts counted together from 1
 * @param length   elements of an all-reduce, bytes of a broadcast value, a frame or an error report
 */
record MessageHeader(int kind, int detail, long sequence, int length) {
    static final int BYTES = 20;

    /** A ring neighbour's all-reduce stream follows. */
    static final int ALL_REDUCE = 1;
    /** A rank has reached a barrier (sent to rank 0). */
    static final int BARRIER = 2;
    /** Rank 0 releases a barrier. */
    static final int RELEASE = 3;
    /** A broadcast value follows. */
    static final int BROADCAST = 4;
    /** A worker's shard for a parameter server follows. */
    static final int PUSH = 5;
    /** A segment of a parameter server's summed shard follows. */
    static final int RESULT = 6;
    /** A parameter server's error report follows ({@link RemoteError}). */
    static final int ERROR = 7;
    /** One rank's block of an all-gather follows (detail: origin rank << 8 | reduce op; length: bytes). */
    static final int GATHER = 8;

    static MessageHeader allReduce(int kind, long sequence, ElementType type, ReduceOp op, int length) {
        return new MessageHeader(kind, type.ordinal() << 8 | op.ordinal(), sequence, length);
    }

    /** Writes the header and leaves the buffer ready to send it (position 0, limit BYTES). */
    void writeTo(ByteBuffer buffer) {
        buffer.clear();
        put(buffer);
        buffer.flip();
    }

    /** Puts the header at the buffer's position. */
    void put(ByteBuffer buffer) {
        buffer.putInt(kind).putInt(detail).putLong(sequence).putInt(length);
    }

    /** Reads a header from the first BYTES of the buffer. */
    static MessageHeader readFrom(ByteBuffer buffer) {
        return new MessageHeader(buffer.getInt(0), buffer.getInt(4), buffer.getLong(8), buffer.getInt(16));
    }

    static ByteBuffer allocate() {
        return ByteBuffer.allocate(BYTES);
    }

    /**
     * Checks that a peer's header announces the same operation as this worker's.
     *
     * @param self who checks, e.g. "rank 1"
     * @param peer who sent it, e.g. "rank 0 (127.0.0.1:4000)"
     */
    static void expectSame(MessageHeader mine, MessageHeader theirs, boolean compareLength, String self, String peer) {
        boolean same = mine.kind == theirs.kind && mine.detail == theirs.detail && mine.sequence == theirs.sequence
                && (!compareLength || mine.length == theirs.length);
        if (!same) {
            throw new MismatchedOperationException(self + " is at " + mine.describe() + " but " + peer + " sent "
                    + theirs.describe() + "; every worker must submit the same operations in the same order"
                    + " (same lengths, types, ops and broadcast roots)");
        }
    }

    /** A human description, e.g. "all-reduce #4 of 1000 float32 elements (SUM)". */
    String describe() {
        switch (kind) {
            case ALL_REDUCE:
            case PUSH:
                return "all-reduce #" + sequence + " of " + length + " " + typeName() + " elements (" + opName() + ")";
            case BARRIER:
                return "barrier #" + sequence;
            case RELEASE:
                return "the release of barrier #" + sequence;
            case BROADCAST:
                return "broadcast #" + sequence + " from rank " + detail;
            case RESULT:
                return "a result of all-reduce #" + sequence;
            case ERROR:
                return "an error report about operation #" + sequence;
            case GATHER:
                return "rank " + (detail >>> 8) + "'s block of the compressed all-reduce #" + sequence + " (" + opName() + ")";
            default:
                return "a message of unknown kind " + kind + " (not a switchml collectives peer, or a different version)";
        }
    }

    private String typeName() {
        int t = detail >>> 8;
        return t < ElementType.values().length ? ElementType.values()[t].toString() : "unknown-type";
    }

    private String opName() {
        int o = detail & 0xFF;
        return o < ReduceOp.values().length ? ReduceOp.values()[o].name() : "unknown-op";
    }
}
