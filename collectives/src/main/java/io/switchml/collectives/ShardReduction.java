package io.switchml.collectives;

import io.switchml.api.ReduceOp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * One parameter server's part of one all-reduce: read every worker's header and push of the shard,
 * sum each segment in rank order once all pushes of it are in, apply MEAN, and send the segment to
 * every worker as a RESULT frame. Reused from one all-reduce to the next; the server's thread
 * drives it, and a {@link Failure} says why an all-reduce cannot finish.
 */
final class ShardReduction {
    private static final Logger LOG = LoggerFactory.getLogger(ShardReduction.class);

    private final ParameterServerConfig config;
    private final String self;
    /** The server's connections by rank (null where none); the server adds and removes them. */
    private final Link[] workers;
    /** Called when a worker leaves cleanly between all-reduces. */
    private final IntConsumer depart;
    private final java.util.concurrent.atomic.LongAdder sent;
    private final int hostRank;
    private final int n;
    private final int segmentElements;
    /** Every rank's push, rank r's at r * shardBytes; rank 0's region then holds the sum. */
    private final WorkBuffer pushes = new WorkBuffer();
    private final ByteBuffer[] headerIn;
    private final ByteBuffer[] frameOut;
    private final ByteBuffer[] pushViews;
    private final ByteBuffer[] sendViews;
    private final int[] pushedBytes;
    private final int[] sentSegments;
    private final int[] payloadSent;
    private final boolean[] inFrame;
    private final boolean[] writeBlocked;
    private ByteBuffer buffer;
    /** The first header of this all-reduce, null until one arrived. */
    private MessageHeader op;
    private int firstRank;
    private Deadline deadline;
    private ElementType type;
    private ReduceOp reduceOp;
    private int shardElements;
    private int shardBytes;
    private int segments;
    private int reducedSegments;

    /** Why the current all-reduce cannot finish; the server reports it to every worker. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient RemoteError error;

        Failure(int code, List<Integer> ranks, String message) {
            super(message, null, false, false);
            this.error = new RemoteError(code, List.copyOf(ranks), message);
        }
    }

    ShardReduction(ParameterServerConfig config, String self, Link[] workers, IntConsumer depart) {
        this(config, self, workers, depart, null, -1);
    }

    /**
     * @param sent     counts the result frames sent to every rank but {@code hostRank}, each when it is started (so
     *                 before any of its bytes can reach the worker); null: not counted
     * @param hostRank the rank in whose process this server runs, or -1
     */
    ShardReduction(ParameterServerConfig config, String self, Link[] workers, IntConsumer depart,
                   java.util.concurrent.atomic.LongAdder sent, int hostRank) {
        this.sent = sent;
        this.hostRank = hostRank;
        this.config = config;
        this.self = self;
        this.workers = workers;
        this.depart = depart;
        this.n = config.workers();
        this.segmentElements = config.segmentBytes() / ElementType.BYTES;
        this.headerIn = new ByteBuffer[n];
        this.frameOut = new ByteBuffer[n];
        this.pushViews = new ByteBuffer[n];
        this.sendViews = new ByteBuffer[n];
        this.pushedBytes = new int[n];
        this.sentSegments = new int[n];
        this.payloadSent = new int[n];
        this.inFrame = new boolean[n];
        this.writeBlocked = new boolean[n];
        for (int r = 0; r < n; r++) {
            headerIn[r] = MessageHeader.allocate();
            frameOut[r] = MessageHeader.allocate();
        }
        reset();
    }

    boolean started() {
        return op != null;
    }

    /** The sequence number of the all-reduce in progress, 0 when none. */
    long sequence() {
        return started() ? op.sequence() : 0;
    }

    /** True once an all-reduce is in progress and its operation timeout has passed. */
    boolean expired() {
        return started() && deadline.expired();
    }

    /** When the all-reduce in progress times out, or Long.MAX_VALUE when none is. */
    long deadlineNanos() {
        return started() ? deadline.atNanos() : Long.MAX_VALUE;
    }

    void reset() {
        op = null;
        deadline = null;
        reducedSegments = 0;
        for (int r = 0; r < n; r++) {
            headerIn[r].clear();
            frameOut[r].clear().limit(0);
            pushedBytes[r] = 0;
            sentSegments[r] = 0;
            payloadSent[r] = 0;
            inFrame[r] = false;
            writeBlocked[r] = false;
        }
    }

    private boolean headerIn(int r) {
        return !headerIn[r].hasRemaining();
    }

    /** Reads, sums and sends all it can; true once every worker has the whole result. */
    boolean advance() {
        boolean progress;
        do {
            progress = false;
            for (int r = 0; r < n; r++) {
                if (workers[r] != null && !headerIn(r)) {
                    progress |= readHeader(r);
                }
                if (workers[r] != null && headerIn(r) && pushedBytes[r] < shardBytes) {
                    progress |= readPush(r);
                }
            }
            progress |= sumReadySegments();
            for (int r = 0; r < n; r++) {
                if (workers[r] != null) {
                    progress |= sendResults(r);
                }
            }
        } while (progress);
        boolean done = started();
        for (int r = 0; r < n; r++) {
            Link link = workers[r];
            if (link == null) {
                done = false;
                continue;
            }
            if (!headerIn(r) || pushedBytes[r] < shardBytes) {
                link.wantRead();
            }
            if (writeBlocked[r]) {
                link.wantWrite();
            }
            done &= started() && sentSegments[r] == segments;
        }
        return done;
    }

    private boolean readHeader(int r) {
        ByteBuffer in = headerIn[r];
        boolean nothingYet = in.position() == 0;
        int got;
        try {
            got = workers[r].read(in);
        } catch (LinkFailure e) {
            if (!started() && nothingYet) {
                LOG.debug("{}: rank {} left", self, r);
                depart.accept(r); // a worker closing between all-reduces: it is done
                return true;
            }
            throw new Failure(RemoteError.PEER_FAILED, List.of(r), "rank " + r + "'s connection to this server closed"
                    + (started() ? " before it pushed " + op.describe() : " in the middle of a header") + ": " + e.getMessage());
        }
        if (in.hasRemaining()) {
            return got > 0;
        }
        MessageHeader header = MessageHeader.readFrom(in);
        if (header.kind() != MessageHeader.PUSH) {
            throw new Failure(RemoteError.MISMATCH, List.of(r), "rank " + r + " sent " + header.describe()
                    + " where this server expected a push");
        }
        if (!started()) {
            begin(header, r);
        } else if (!header.equals(op)) {
            throw new Failure(RemoteError.MISMATCH, List.of(Math.min(r, firstRank), Math.max(r, firstRank)),
                    "rank " + firstRank + " pushed " + op.describe() + " but rank " + r + " pushed " + header.describe()
                            + "; every worker must submit the same operations in the same order");
        }
        return true;
    }

    private void begin(MessageHeader header, int r) {
        int t = header.detail() >>> 8;
        int o = header.detail() & 0xFF;
        if (t >= ElementType.values().length || o >= ReduceOp.values().length || header.length() < 0) {
            throw new Failure(RemoteError.MISMATCH, List.of(r), "rank " + r + " pushed " + header.describe()
                    + ", which this server cannot reduce");
        }
        op = header;
        firstRank = r;
        deadline = Deadline.after(config.operationTimeout());
        type = ElementType.values()[t];
        reduceOp = ReduceOp.values()[o];
        shardElements = Partition.of(header.length(), config.servers()).size(config.index());
        shardBytes = shardElements * ElementType.BYTES;
        segments = Math.max(1, (shardElements + segmentElements - 1) / segmentElements);
        long total = (long) n * shardBytes;
        if (total > Integer.MAX_VALUE) {
            throw new Failure(RemoteError.OTHER, List.of(), op.describe() + " needs " + total + " bytes on this server (all "
                    + n + " pushes of a " + shardBytes + "-byte shard), over the 2 GiB one server buffers; use more servers");
        }
        if (buffer != pushes.atLeast((int) total)) { // it grew: views of the new one
            buffer = pushes.current();
            for (int i = 0; i < n; i++) {
                pushViews[i] = buffer.duplicate();
                sendViews[i] = buffer.duplicate();
            }
        }
    }

    private boolean readPush(int r) {
        int base = r * shardBytes;
        pushViews[r].limit(base + shardBytes).position(base + pushedBytes[r]);
        int got;
        try {
            got = workers[r].read(pushViews[r]);
        } catch (LinkFailure e) {
            throw new Failure(RemoteError.PEER_FAILED, List.of(r), "rank " + r + "'s connection to this server closed"
                    + " after it pushed " + pushedBytes[r] + " of " + shardBytes + " bytes of " + op.describe() + ": "
                    + e.getMessage());
        }
        pushedBytes[r] += got;
        return got > 0;
    }

    /** Sums, in rank order, every segment all workers have pushed. */
    private boolean sumReadySegments() {
        boolean progress = false;
        while (started() && reducedSegments < segments) {
            int from = reducedSegments * segmentElements;
            int count = Math.min(segmentElements, shardElements - from);
            int endByte = (from + count) * ElementType.BYTES;
            for (int r = 0; r < n; r++) {
                if (workers[r] == null || !headerIn(r) || pushedBytes[r] < endByte) {
                    return progress;
                }
            }
            int at = from * ElementType.BYTES;
            for (int r = 1; r < n; r++) {
                type.accumulate(buffer, at, buffer, r * shardBytes + at, count);
            }
            type.finish(reduceOp, buffer, at, count, n);
            reducedSegments++;
            progress = true;
        }
        return progress;
    }

    /** Sends rank r the summed segments it does not have yet, one frame each. */
    private boolean sendResults(int r) {
        writeBlocked[r] = false;
        boolean progress = false;
        try {
            while (sentSegments[r] < reducedSegments) {
                int from = sentSegments[r] * segmentElements;
                int bytes = Math.min(segmentElements, shardElements - from) * ElementType.BYTES;
                if (!inFrame[r]) {
                    new MessageHeader(MessageHeader.RESULT, 0, op.sequence(), bytes).writeTo(frameOut[r]);
                    inFrame[r] = true;
                    payloadSent[r] = 0;
                    if (sent != null && r != hostRank) {
                        sent.add(MessageHeader.BYTES + bytes);
                    }
                }
                if (frameOut[r].hasRemaining()) {
                    progress |= workers[r].write(frameOut[r]) > 0;
                    if (frameOut[r].hasRemaining()) {
                        writeBlocked[r] = true;
                        return progress;
                    }
                }
                int at = from * ElementType.BYTES;
                sendViews[r].limit(at + bytes).position(at + payloadSent[r]);
                int sent = workers[r].write(sendViews[r]);
                payloadSent[r] += sent;
                progress |= sent > 0;
                if (payloadSent[r] < bytes) {
                    writeBlocked[r] = true;
                    return progress;
                }
                inFrame[r] = false;
                sentSegments[r]++;
            }
        } catch (LinkFailure e) {
            throw new Failure(RemoteError.PEER_FAILED, List.of(r), "rank " + r + "'s connection to this server broke"
                    + " while the server was returning " + op.describe() + ": " + e.getMessage());
        }
        return progress;
    }

    /** Adds to {@code t} what is left of the frame rank r is in the middle of. */
    void finishFrame(int r, Transfers t) {
        if (!inFrame[r]) {
            return;
        }
        int from = sentSegments[r] * segmentElements;
        int bytes = Math.min(segmentElements, shardElements - from) * ElementType.BYTES;
        int at = from * ElementType.BYTES;
        if (frameOut[r].hasRemaining()) {
            t.send(workers[r], frameOut[r], "the rest of a result frame");
        }
        t.send(workers[r], sendViews[r].limit(at + bytes).position(at + payloadSent[r]), "the rest of a result frame");
    }

    /** The report when the operation timeout passed: who was not heard from, or who did not take the result. */
    Failure timedOut() {
        List<Integer> absent = new ArrayList<>();
        List<Integer> silent = new ArrayList<>();
        List<Integer> partial = new ArrayList<>();
        List<Integer> notReading = new ArrayList<>();
        StringBuilder partialDetail = new StringBuilder();
        for (int r = 0; r < n; r++) {
            if (workers[r] == null) {
                absent.add(r);
            } else if (!headerIn(r)) {
                silent.add(r);
            } else if (pushedBytes[r] < shardBytes) {
                partial.add(r);
                partialDetail.append(partialDetail.length() == 0 ? "" : ", ").append("rank ").append(r).append(": ")
                        .append(pushedBytes[r]).append(" of ").append(shardBytes).append(" bytes");
            } else if (sentSegments[r] < segments) {
                notReading.add(r);
            }
        }
        List<Integer> missing = new ArrayList<>(absent);
        missing.addAll(silent);
        missing.addAll(partial);
        missing.sort(null);
        StringBuilder s = new StringBuilder(op.describe() + " timed out after " + deadline.timeout().toMillis()
                + " ms on this server:");
        if (!missing.isEmpty()) {
            s.append(" not heard from rank").append(missing.size() == 1 ? " " + missing.get(0) : "s " + missing);
            if (!absent.isEmpty()) {
                s.append("; not connected: ").append(absent);
            }
            if (!silent.isEmpty()) {
                s.append("; connected but no push: ").append(silent);
            }
            if (!partial.isEmpty()) {
                s.append("; incomplete push (").append(partialDetail).append(')');
            }
        } else {
            s.append(" every rank pushed, but ranks ").append(notReading).append(" did not take the result");
            missing = notReading;
        }
        return new Failure(RemoteError.TIMEOUT, missing, s.toString());
    }
}
