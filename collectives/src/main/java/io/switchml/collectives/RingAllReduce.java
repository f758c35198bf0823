package io.switchml.collectives;

import io.switchml.api.ReduceOp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Ring all-reduce over TCP, as Gloo's ring: the tensor is cut into n chunks ({@link Partition});
 * n-1 reduce-scatter steps leave rank r with the full sum of chunk r+1, then n-1 all-gather steps
 * pass every finished chunk around the ring. Each rank sends only to rank+1 and receives only from
 * rank-1, both at once. Every step is pipelined in segments: a segment received is added and
 * forwarded at once, while the next one is still arriving.
 *
 * <p>Numbers: chunk c is summed in a fixed order along the ring, starting at rank c:
 * {@code s = x[c]; s = x[c+1] + s; ...; s = x[c+n-1] + s} (ranks mod n, float32 round-to-nearest
 * after each addition, int32 wrapping). The rank that completes the sum (rank c-1) applies MEAN,
 * one division {@code s / (float) n} (int32: Java's {@code s / n}), and the all-gather copies those
 * bytes to everyone: every rank ends with bit-identical results, which {@link RingReference}
 * computes locally.
 *
 * <p>Each all-reduce starts with a header to the next rank, so ranks that submit different
 * operations fail with a {@link io.switchml.api.MismatchedOperationException} instead of mixing
 * tensors.
 */
public sealed class RingAllReduce extends TcpCollective permits CompressedAllReduce {
    private final Pass pass;

    RingAllReduce(CollectiveConfig config, Poller poller, PeerConnector.Links links) {
        super(config, poller, links, new java.util.concurrent.atomic.LongAdder());
        int n = config.workers();
        this.pass = n == 1 ? null
                : new Pass(links.workers()[(config.rank() + 1) % n], links.workers()[(config.rank() + n - 1) % n]);
    }

    /**
     * Connects to the neighbours and rank 0, and returns once they are all connected.
     *
     * @param listener this rank's bound endpoint, or null to bind {@code endpoints[rank]}; closed once connected
     */
    public static RingAllReduce open(CollectiveConfig config, Listener listener) {
        if (config.algorithm() != Algorithm.RING) {
            throw new IllegalArgumentException("a ring needs algorithm ring, not " + config.algorithm());
        }
        return connect(config, listener, RingAllReduce::new);
    }

    /** How an instance is made once its links are up. */
    interface Factory<T extends RingAllReduce> {
        T create(CollectiveConfig config, Poller poller, PeerConnector.Links links);
    }

    /** Binds (unless given a listener), connects to the neighbours and rank 0, and makes the instance. */
    static <T extends RingAllReduce> T connect(CollectiveConfig config, Listener listener, Factory<T> factory) {
        Listener bound = listener != null ? listener : Listener.bind(config.endpoints().get(config.rank()));
        Poller poller = new Poller();
        try {
            PeerConnector.Links links = workerConnections(poller, config, bound, true)
                    .connect(Deadline.after(config.connectTimeout()));
            return factory.create(config, poller, links);
        } catch (RuntimeException e) {
            poller.close();
            throw e;
        } finally {
            bound.close();
        }
    }

    /** The link to rank+1 (null with one worker). */
    Link nextLink() {
        return config.workers() == 1 ? null : links.workers()[(config.rank() + 1) % config.workers()];
    }

    /** The link to rank-1 (null with one worker). */
    Link previousLink() {
        int n = config.workers();
        return n == 1 ? null : links.workers()[(config.rank() + n - 1) % n];
    }

    @Override
    protected final void reduce(Operand operand, ReduceOp op, long sequence, String context) {
        if (pass == null) {
            return; // one worker: the sum is the input, and x / 1 == x
        }
        pass.start(operand, op, sequence);
        poller.complete(pass, Deadline.after(config.operationTimeout()), context);
    }

    /** One all-reduce's traffic around the ring; reused from one all-reduce to the next. */
    private final class Pass implements Exchange {
        private final Link next;
        private final Link prev;
        private final int n = config.workers();
        private final int rank = config.rank();
        private final int segmentElements = config.segmentBytes() / ElementType.BYTES;
        private final ByteBuffer sendHeader = MessageHeader.allocate();
        private final ByteBuffer receiveHeader = MessageHeader.allocate();
        /** One received segment, before it is added to ours. */
        private final ByteBuffer staging = ByteBuffer.allocateDirect(config.segmentBytes()).order(ByteOrder.LITTLE_ENDIAN);
        private ByteBuffer buffer;
        private ByteBuffer sendView;
        private ByteBuffer receiveView;

        private MessageHeader header;
        private ElementType type;
        private ReduceOp op;
        private Partition chunks;
        private int steps;
        private boolean headerChecked;
        /** Step being sent, and bytes of its chunk sent. */
        private int sendStep;
        private int sendByte;
        /** Step being received, elements of its chunk finished (added, or in place), bytes in place (all-gather). */
        private int receiveStep;
        private int receivedElements;
        private int receivedBytes;
        private boolean writeBlocked;

        Pass(Link next, Link prev) {
            this.next = next;
            this.prev = prev;
        }

        void start(Operand operand, ReduceOp op, long sequence) {
            if (buffer != work.current()) { // it grew: views of the new one
                buffer = work.current();
                sendView = buffer.duplicate();
                receiveView = buffer.duplicate();
            }
            this.type = operand.type();
            this.op = op;
            this.header = MessageHeader.allReduce(MessageHeader.ALL_REDUCE, sequence, type, op, operand.length());
            header.writeTo(sendHeader);
            receiveHeader.clear();
            headerChecked = false;
            chunks = Partition.of(operand.length(), n);
            steps = 2 * (n - 1);
            sendStep = 0;
            sendByte = 0;
            receiveStep = 0;
            receivedElements = 0;
            receivedBytes = 0;
            staging.clear();
        }

        /** Step t sends chunk r-t: its own at first, then each chunk it has just added to or received. */
        private int sendChunk(int step) {
            return Math.floorMod(rank - step, n);
        }

        /** Step t receives chunk r-t-1 from the previous rank. */
        private int receiveChunk(int step) {
            return Math.floorMod(rank - step - 1, n);
        }

        private boolean reduceScatter(int step) {
            return step < n - 1;
        }

        @Override
        public boolean advance() throws IOException {
            boolean progress;
            do {
                progress = send() | receive();
            } while (progress);
            boolean done = finished();
            if (!done) {
                if (!headerChecked || receiveStep < steps) {
                    prev.wantRead();
                }
                if (writeBlocked) {
                    next.wantWrite();
                }
            }
            return done;
        }

        private boolean finished() {
            return !sendHeader.hasRemaining() && headerChecked && sendStep == steps && receiveStep == steps;
        }

        /** Sends all that is ready and the socket takes. */
        private boolean send() throws LinkFailure {
            writeBlocked = false;
            boolean progress = false;
            if (sendHeader.hasRemaining()) {
                progress = next.write(sendHeader) > 0;
                if (sendHeader.hasRemaining()) {
                    writeBlocked = true;
                    return progress;
                }
            }
            while (sendStep < steps) {
                int chunk = sendChunk(sendStep);
                int chunkBytes = chunks.size(chunk) * ElementType.BYTES;
                if (sendByte == chunkBytes) {
                    sendStep++;
                    sendByte = 0;
                    progress = true;
                    continue;
                }
                int ready = readyToSend(sendStep) * ElementType.BYTES;
                if (sendByte >= ready) {
                    return progress; // waiting for the previous step's segment to arrive
                }
                int base = chunks.start(chunk) * ElementType.BYTES;
                sendView.limit(base + ready).position(base + sendByte);
                int sent = next.write(sendView);
                sendByte += sent;
                progress |= sent > 0;
                if (sendByte < ready) {
                    writeBlocked = true;
                    return progress;
                }
            }
            return progress;
        }

        /**
         * Elements of step t's chunk ready to go: all of it at step 0 (our own values), else as much of
         * it as step t-1 (which received the same chunk) has finished.
         */
        private int readyToSend(int step) {
            int size = chunks.size(sendChunk(step));
            if (step == 0 || receiveStep > step - 1) {
                return size;
            }
            return receiveStep == step - 1 ? receivedElements : 0;
        }

        /** Receives all that has arrived, adding (reduce-scatter) or placing (all-gather) it. */
        private boolean receive() throws LinkFailure {
            boolean progress = false;
            if (!headerChecked) {
                progress = prev.read(receiveHeader) > 0;
                if (receiveHeader.hasRemaining()) {
                    return progress;
                }
                MessageHeader.expectSame(header, MessageHeader.readFrom(receiveHeader), true, self, prev.peer());
                headerChecked = true;
            }
            while (receiveStep < steps) {
                int chunk = receiveChunk(receiveStep);
                int size = chunks.size(chunk);
                if (receivedElements == size) {
                    receiveStep++;
                    receivedElements = 0;
                    receivedBytes = 0;
                    progress = true;
                    continue;
                }
                int base = chunks.start(chunk) * ElementType.BYTES;
                if (reduceScatter(receiveStep)) {
                    int segment = Math.min(segmentElements, size - receivedElements);
                    staging.limit(segment * ElementType.BYTES);
                    progress |= prev.read(staging) > 0;
                    if (staging.hasRemaining()) {
                        return progress;
                    }
                    int at = base + receivedElements * ElementType.BYTES;
                    type.accumulate(buffer, at, staging, 0, segment); // ours + upstream's partial sum
                    if (receiveStep == n - 2) {
                        type.finish(op, buffer, at, segment, n); // this rank completed the chunk's sum
                    }
                    receivedElements += segment;
                    staging.clear();
                } else {
                    receiveView.limit(base + size * ElementType.BYTES).position(base + receivedBytes);
                    int got = prev.read(receiveView);
                    if (got == 0) {
                        return progress;
                    }
                    receivedBytes += got;
                    receivedElements = receivedBytes / ElementType.BYTES; // whole elements only are forwarded
                    progress = true;
                }
            }
            return progress;
        }

        @Override
        public String waitingFor() {
            StringBuilder s = new StringBuilder();
            if (!headerChecked) {
                s.append(prev.peer()).append(" to start ").append(header.describe());
            } else if (receiveStep < steps) {
                int chunk = receiveChunk(receiveStep);
                s.append(prev.peer()).append(" to send chunk ").append(chunk).append(" in ")
                        .append(reduceScatter(receiveStep) ? "reduce-scatter step " + (receiveStep + 1)
                                : "all-gather step " + (receiveStep - n + 2))
                        .append(" of ").append(n - 1).append(" (").append(receivedElements).append(" of ")
                        .append(chunks.size(chunk)).append(" elements in; it may itself be waiting for its previous rank)");
            }
            if (writeBlocked) {
                s.append(s.length() == 0 ? "" : ", and for ").append(next.peer())
                        .append(" to take more of step ").append(sendStep + 1).append(" (the connection is full)");
            }
            return s.toString();
        }

        @Override
        public List<Integer> awaitedRanks() {
            List<Integer> ranks = new ArrayList<>();
            if (!headerChecked || receiveStep < steps) {
                ranks.addAll(prev.peerRanks());
            }
            if (writeBlocked && !ranks.containsAll(next.peerRanks())) {
                ranks.addAll(next.peerRanks());
            }
            ranks.sort(null);
            return ranks;
        }
    }
}
