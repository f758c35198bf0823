package io.switchml.collectives;

import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the ring and the parameter server share: the links to the other workers, the operation
 * queue (one thread, operations in submission order), barrier and broadcast through rank 0, the
 * {@link AllReduce} entry points, and closing. A subclass only says how one all-reduce moves bytes,
 * in {@link #reduce}.
 *
 * <p>Buffers passed to {@code allReduceAsync} must not change until its future completes. After an
 * operation fails, the instance closes its links (so its peers fail at once too) and every later
 * operation fails; close it on every worker and open new instances.
 */
abstract class TcpCollective implements AllReduce, BytesSent {
    protected final CollectiveConfig config;
    protected final Poller poller;
    protected final PeerConnector.Links links;
    /** The tensor's bytes while it is reduced; reused from one all-reduce to the next. */
    protected final WorkBuffer work = new WorkBuffer();
    protected final String self;
    /** Bytes written to other workers and servers by this instance's links ({@link BytesSent}). */
    protected final LongAdder sent;
    /** The part of {@link #sent} that barriers and broadcasts wrote: not the algorithm's traffic. */
    private final LongAdder controlSent = new LongAdder();
    private final ControlOperations control;
    private final OperationQueue queue;
    /** Operations run so far; only the queue's thread touches it. */
    private long sequence;

    /**
     * @param sent counts the bytes written; every link to another worker counts into it here, a subclass adds
     *             the links it knows cross no process boundary or do (servers)
     */
    protected TcpCollective(CollectiveConfig config, Poller poller, PeerConnector.Links links, LongAdder sent) {
        this.config = config;
        this.poller = poller;
        this.links = links;
        this.sent = sent;
        for (Link worker : links.workers()) {
            if (worker != null) {
                worker.countSentInto(sent);
            }
        }
        this.self = "rank " + config.rank() + " (" + config.algorithm().id() + ")";
        this.control = new ControlOperations(config.rank(), config.workers(), links.workers(), poller, self);
        this.queue = new OperationQueue(self, "switchml-" + config.algorithm().id() + "-rank-" + config.rank(),
                links::closeAll);
    }

    /**
     * Prepares the connections every worker needs: to rank 0 (barrier, broadcast) and, for the ring,
     * to its two neighbours. The higher rank of each pair dials the lower one.
     */
    static PeerConnector workerConnections(Poller poller, CollectiveConfig config, Listener listener, boolean ringNeighbours) {
        int rank = config.rank();
        int n = config.workers();
        PeerConnector rendezvous = new PeerConnector(poller, new Hello(Hello.WORKER, rank, n, config.serverCount()), listener);
        for (int peer = 0; peer < n; peer++) {
            boolean needed = peer != rank && (peer == 0 || rank == 0
                    || ringNeighbours && (peer == (rank + 1) % n || rank == (peer + 1) % n));
            if (needed && peer < rank) {
                rendezvous.dialWorker(peer, config.endpoints().get(peer));
            } else if (needed) {
                rendezvous.acceptWorker(peer, config.endpoints().get(peer));
            }
        }
        return rendezvous;
    }

    /**
     * Reduces the operand: on return, bytes [0, operand.bytes()) of {@code work} hold the result.
     * Runs on the queue's thread; {@code context} starts every error message.
     */
    protected abstract void reduce(Operand operand, ReduceOp op, long sequence, String context);

    /**
     * Runs one all-reduce on the queue's thread, from the caller's input to its output: by default through the
     * work buffer and {@link #reduce}.
     */
    protected void execute(Operand operand, ReduceOp op, long sequence, String context) {
        operand.copyIn(work.atLeast(operand.bytes()));
        reduce(operand, op, sequence, context);
        operand.copyOut(work.current());
    }

    @Override
    public final long bytesSent() {
        return sent.sum() - controlSent.sum() + otherBytesSent();
    }

    /** Bytes sent for this worker by others in its process (a parameter server it hosts); 0 by default. */
    protected long otherBytesSent() {
        return 0;
    }

    @Override
    public final int rank() {
        return config.rank();
    }

    @Override
    public final int workers() {
        return config.workers();
    }

    @Override
    public final CompletableFuture<Void> allReduceAsync(FloatBuffer in, FloatBuffer out, ReduceOp op) {
        return submit(Operand.of(in, out), op);
    }

    @Override
    public final CompletableFuture<Void> allReduceAsync(IntBuffer in, IntBuffer out, ReduceOp op) {
        return submit(Operand.of(in, out), op);
    }

    private CompletableFuture<Void> submit(Operand operand, ReduceOp op) {
        Objects.requireNonNull(op, "op");
        return queue.submit(() -> {
            long seq = ++sequence;
            String context = self + ": " + MessageHeader.allReduce(MessageHeader.ALL_REDUCE, seq, operand.type(), op,
                    operand.length()).describe();
            execute(operand, op, seq, context);
            return null;
        });
    }

    @Override
    public final void barrier() {
        OperationQueue.await(queue.submit(() -> {
            long before = sent.sum(); // only this queue's thread writes this instance's links
            try {
                control.barrier(++sequence, Deadline.after(config.operationTimeout()));
            } finally {
                controlSent.add(sent.sum() - before);
            }
            return null;
        }));
    }

    @Override
    public final byte[] broadcast(byte[] value, int root) {
        if (root < 0 || root >= workers()) {
            throw new IllegalArgumentException("broadcast root " + root + " outside 0.." + (workers() - 1));
        }
        if (root == rank()) {
            Objects.requireNonNull(value, "the root's broadcast value");
        }
        return OperationQueue.await(queue.submit(() -> {
            long before = sent.sum();
            try {
                return control.broadcast(value, root, ++sequence, Deadline.after(config.operationTimeout()));
            } finally {
                controlSent.add(sent.sum() - before);
            }
        }));
    }

    /** Fails queued operations, stops the running one, closes the links. Idempotent. */
    @Override
    public void close() {
        queue.close(poller::abort);
        links.closeAll();
        poller.close();
    }
}
