package io.switchml.collectives;

import io.switchml.api.ReduceOp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * All-gather of one variable-size block per rank around the ring, over the ring all-reduce's links: in
 * n-1 steps, step t sends the block of rank r-t to rank r+1 and receives the block of rank r-t-1 from
 * rank r-1, so each rank sends (n-1) blocks and receives the others' (the bandwidth-optimal schedule
 * for blocks of any size). Each block travels behind a {@link MessageHeader} of kind
 * {@link MessageHeader#GATHER} naming its origin rank, the operation's reduce op and sequence, and its
 * length; a received block is forwarded as it arrives (byte by byte, no store-and-forward), so the
 * steps overlap. Received blocks live in buffers that grow to the largest block seen and are reused.
 * Runs on the owning instance's queue thread, driven by its {@link Poller}.
 */
final class RingAllGather implements Exchange {
    private final Link next;
    private final Link prev;
    private final int n;
    private final int rank;
    private final String self;
    /** Received blocks, by origin; grown to the largest block and reused. */
    private final ByteBuffer[] storage;
    /** This operation's block of each origin: position 0, limit its length. */
    private final ByteBuffer[] blocks;
    private final ByteBuffer sendHeader = MessageHeader.allocate();
    private final ByteBuffer receiveHeader = MessageHeader.allocate();
    private ByteBuffer sendView;
    private ByteBuffer receiveView;
    private long sequence;
    private ReduceOp op;
    private int steps;
    /** Step being sent; whether its header is built; payload bytes of it sent. */
    private int sendStep;
    private boolean sendHeaderBuilt;
    private int sentBytes;
    /** Step being received; whether its header is in; payload bytes of it received. */
    private int receiveStep;
    private boolean receiveHeaderDone;
    private int receivedBytes;
    private boolean writeBlocked;

    RingAllGather(Link next, Link prev, int workers, int rank, String self) {
        this.next = next;
        this.prev = prev;
        this.n = workers;
        this.rank = rank;
        this.self = self;
        this.storage = new ByteBuffer[workers];
        this.blocks = new ByteBuffer[workers];
    }

    /** Starts the all-gather of operation {@code sequence}; {@code mine} (position 0 to limit) must not change until it ends. */
    void start(long sequence, ReduceOp op, ByteBuffer mine) {
        this.sequence = sequence;
        this.op = op;
        this.steps = n - 1;
        blocks[rank] = mine.duplicate().order(ByteOrder.LITTLE_ENDIAN).position(0);
        for (int o = 0; o < n; o++) {
            if (o != rank) {
                blocks[o] = null;
            }
        }
        sendStep = 0;
        sendHeaderBuilt = false;
        sentBytes = 0;
        receiveStep = 0;
        receiveHeaderDone = false;
        receivedBytes = 0;
        receiveHeader.clear();
        writeBlocked = false;
    }

    /** The block of {@code origin} (this rank's own too), little-endian, position 0, limit its length; after the end. */
    ByteBuffer block(int origin) {
        return blocks[origin].duplicate().order(ByteOrder.LITTLE_ENDIAN).position(0);
    }

    /** Step t sends the block of rank r-t: its own first, then each one it has just received. */
    private int sendOrigin(int step) {
        return Math.floorMod(rank - step, n);
    }

    /** Step t receives the block of rank r-t-1. */
    private int receiveOrigin(int step) {
        return Math.floorMod(rank - step - 1, n);
    }

    private MessageHeader header(int origin, int length) {
        return new MessageHeader(MessageHeader.GATHER, origin << 8 | op.ordinal(), sequence, length);
    }

    @Override
    public boolean advance() throws IOException {
        boolean progress;
        do {
            progress = send() | receive();
        } while (progress);
        boolean done = sendStep == steps && receiveStep == steps;
        if (!done) {
            if (receiveStep < steps) {
                prev.wantRead();
            }
            if (writeBlocked) {
                next.wantWrite();
            }
        }
        return done;
    }

    /** Whether step {@code step}'s block has arrived whole (always true for step 0: our own). */
    private boolean arrived(int step) {
        return step == 0 || receiveStep > step - 1;
    }

    private boolean send() throws LinkFailure {
        writeBlocked = false;
        boolean progress = false;
        while (sendStep < steps) {
            int origin = sendOrigin(sendStep);
            if (!sendHeaderBuilt) {
                if (!arrived(sendStep) && !(receiveStep == sendStep - 1 && receiveHeaderDone)) {
                    return progress; // the block to forward has not announced its length yet
                }
                header(origin, blocks[origin].limit()).writeTo(sendHeader);
                sendView = blocks[origin].duplicate();
                sentBytes = 0;
                sendHeaderBuilt = true;
            }
            if (sendHeader.hasRemaining()) {
                progress |= next.write(sendHeader) > 0;
                if (sendHeader.hasRemaining()) {
                    writeBlocked = true;
                    return progress;
                }
            }
            int length = blocks[origin].limit();
            if (sentBytes == length) {
                sendStep++;
                sendHeaderBuilt = false;
                progress = true;
                continue;
            }
            int ready = arrived(sendStep) ? length : receivedBytes;
            if (sentBytes >= ready) {
                return progress; // waiting for more of the block to arrive
            }
            sendView.limit(ready).position(sentBytes);
            int sent = next.write(sendView);
            sentBytes += sent;
            progress |= sent > 0;
            if (sentBytes < ready) {
                writeBlocked = true;
                return progress;
            }
        }
        return progress;
    }

    private boolean receive() throws LinkFailure {
        boolean progress = false;
        while (receiveStep < steps) {
            int origin = receiveOrigin(receiveStep);
            if (!receiveHeaderDone) {
                progress |= prev.read(receiveHeader) > 0;
                if (receiveHeader.hasRemaining()) {
                    return progress;
                }
                MessageHeader theirs = MessageHeader.readFrom(receiveHeader);
                MessageHeader.expectSame(header(origin, 0), theirs, false, self, prev.peer());
                if (theirs.length() < 0 || theirs.length() > CompressedMessage.MAX_BYTES) {
                    throw new io.switchml.api.SwitchMLException(self + ": " + prev.peer() + " announced a block of "
                            + theirs.length() + " bytes in " + theirs.describe());
                }
                blocks[origin] = room(origin, theirs.length());
                receiveView = blocks[origin].duplicate();
                receivedBytes = 0;
                receiveHeaderDone = true;
                receiveHeader.clear();
                progress = true;
            }
            int length = blocks[origin].limit();
            if (receivedBytes == length) {
                receiveStep++;
                receiveHeaderDone = false;
                progress = true;
                continue;
            }
            receiveView.limit(length).position(receivedBytes);
            int got = prev.read(receiveView);
            if (got == 0) {
                return progress;
            }
            receivedBytes += got;
            progress = true;
        }
        return progress;
    }

    /** A view of origin's storage, grown if needed, with position 0 and limit {@code length}. */
    private ByteBuffer room(int origin, int length) {
        ByteBuffer s = storage[origin];
        if (s == null || s.capacity() < length) {
            int capacity = (int) Math.min(CompressedMessage.MAX_BYTES, Math.max(length, s == null ? 0 : (long) s.capacity() * 3 / 2));
            storage[origin] = s = ByteBuffer.allocateDirect(capacity);
        }
        return s.duplicate().order(ByteOrder.LITTLE_ENDIAN).position(0).limit(length);
    }

    @Override
    public String waitingFor() {
        StringBuilder s = new StringBuilder();
        if (receiveStep < steps) {
            int origin = receiveOrigin(receiveStep);
            s.append(prev.peer()).append(" to send rank ").append(origin).append("'s block in all-gather step ")
                    .append(receiveStep + 1).append(" of ").append(steps).append(" of operation #").append(sequence)
                    .append(receiveHeaderDone ? " (" + receivedBytes + " of " + blocks[origin].limit() + " bytes in)"
                            : " (its header not in yet)")
                    .append("; it may itself be waiting for its previous rank");
        }
        if (writeBlocked) {
            s.append(s.length() == 0 ? "" : ", and for ").append(next.peer()).append(" to take more of step ")
                    .append(sendStep + 1).append(" (the connection is full)");
        }
        return s.toString();
    }

    @Override
    public List<Integer> awaitedRanks() {
        List<Integer> ranks = new ArrayList<>();
        if (receiveStep < steps) {
            ranks.addAll(prev.peerRanks());
        }
        if (writeBlocked && !ranks.containsAll(next.peerRanks())) {
            ranks.addAll(next.peerRanks());
        }
        ranks.sort(null);
        return ranks;
    }
}
