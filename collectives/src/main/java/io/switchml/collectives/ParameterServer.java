package io.switchml.collectives;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * One parameter server: it owns shard {@code index} of every all-reduce. Each worker pushes its
 * values of the shard; the server keeps all n pushes, and as soon as every worker's push of a
 * segment is in, it sums that segment in rank order ({@code x[0] + x[1] + ... + x[n-1]}), applies
 * MEAN, and sends the segment to every worker. All-reduces follow one another on the same
 * connections.
 *
 * <p>When an all-reduce cannot finish (a worker is not heard from within the operation timeout, a
 * worker's connection closes mid-operation, workers push different operations), the server sends
 * every worker an error report naming the ranks at fault, closes the connections and waits for the
 * workers to connect again. It runs on one thread of its own, inside a worker's process or alone.
 *
 * <p>Memory: n pushes of one shard, i.e. n x (tensor bytes / servers), kept between all-reduces.
 */
public final class ParameterServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ParameterServer.class);
    /** How long the server tries to deliver its error report before it closes the connections. */
    private static final Duration REPORT_FLUSH = Duration.ofSeconds(1);

    private final ParameterServerConfig config;
    private final Listener listener;
    private final String self;
    private final Hello hello;
    private final Poller poller = new Poller();
    private final Link[] workers;
    private final List<Pending> handshakes = new ArrayList<>();
    private final ShardReduction reduction;
    private final AtomicLong completed = new AtomicLong();
    private final Thread thread;
    /** Counts the result frames sent to every worker but {@link #hostRank} ({@link ShardReduction}); null when not counted. */
    private final LongAdder sent;
    /** The rank whose process hosts this server (its link crosses no process boundary), or -1. */
    private final int hostRank;

    /** An incoming connection that has not said who it is yet. */
    private record Pending(Handshake handshake, long deadlineNanos) {
    }

    private ParameterServer(ParameterServerConfig config, Listener listener, LongAdder sent, int hostRank) {
        this.config = config;
        this.sent = sent;
        this.hostRank = hostRank;
        this.listener = listener;
        this.self = "server " + config.index() + " (" + listener.address() + ")";
        this.hello = new Hello(Hello.SERVER, config.index(), config.workers(), config.servers());
        this.workers = new Link[config.workers()];
        this.reduction = new ShardReduction(config, self, workers, this::drop, sent, hostRank);
        this.thread = new Thread(this::run, "switchml-ps-server-" + config.index());
        thread.setDaemon(true);
    }

    /** Binds {@code config.endpoint()} and starts serving. */
    public static ParameterServer start(ParameterServerConfig config) {
        return start(config, Listener.bind(config.endpoint()));
    }

    /** Starts serving on an already bound listener (which the server then owns). */
    public static ParameterServer start(ParameterServerConfig config, Listener listener) {
        return start(config, listener, null, -1);
    }

    /**
     * Starts serving inside a worker's process: the bytes it sends to every rank but {@code hostRank} are
     * counted into {@code sent}, the hosting worker's traffic ({@link BytesSent}).
     */
    static ParameterServer start(ParameterServerConfig config, Listener listener, LongAdder sent, int hostRank) {
        ParameterServer server = new ParameterServer(config, listener, sent, hostRank);
        try {
            server.poller.register(listener.channel(), SelectionKey.OP_ACCEPT, null);
        } catch (IOException e) {
            server.poller.close();
            listener.close();
            throw new UncheckedIOException(server.self + ": cannot watch the listener", e);
        }
        server.thread.start();
        return server;
    }

    public InetSocketAddress address() {
        return listener.address();
    }

    /** All-reduces completed since the server started. */
    public long completedOperations() {
        return completed.get();
    }

    /** Stops serving and closes every connection; workers in an all-reduce see the connection close. */
    @Override
    public void close() {
        poller.abort();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void run() {
        try {
            while (true) {
                try {
                    acceptNew();
                    advanceHandshakes();
                    if (reduction.advance()) {
                        completed.incrementAndGet();
                        reduction.reset();
                        continue;
                    }
                    if (reduction.expired()) {
                        throw reduction.timedOut();
                    }
                    poller.await(waitMillis());
                } catch (ShardReduction.Failure f) {
                    giveUp(f);
                } catch (Poller.AbortedException e) {
                    throw e;
                } catch (IOException | RuntimeException e) {
                    LOG.error("{}: unexpected error", self, e);
                    giveUp(new ShardReduction.Failure(RemoteError.OTHER, List.of(), "internal error of the server: " + e));
                }
            }
        } catch (Poller.AbortedException e) {
            // close() was called
        } finally {
            for (int r = 0; r < workers.length; r++) {
                drop(r);
            }
            for (Pending p : handshakes) {
                p.handshake.close();
            }
            listener.close();
            poller.close();
        }
    }

    /** How long to sleep: until the all-reduce's deadline or the next handshake's, else until something happens (0). */
    private long waitMillis() {
        long until = reduction.deadlineNanos();
        for (Pending p : handshakes) {
            until = Math.min(until, p.deadlineNanos);
        }
        return until == Long.MAX_VALUE ? 0 : Math.max(1, (until - System.nanoTime()) / 1_000_000 + 1);
    }

    private void acceptNew() throws IOException {
        SocketChannel channel;
        while ((channel = listener.channel().accept()) != null) {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            SelectionKey key = poller.register(channel, SelectionKey.OP_READ, null);
            handshakes.add(new Pending(new Handshake(channel, key, hello), System.nanoTime() + config.connectTimeout().toNanos()));
        }
    }

    private void advanceHandshakes() throws IOException {
        for (Iterator<Pending> it = handshakes.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            Handshake h = p.handshake;
            boolean done;
            try {
                done = h.advance();
            } catch (IOException e) {
                h.close();
                it.remove();
                continue;
            }
            if (!done) {
                if (System.nanoTime() - p.deadlineNanos >= 0) {
                    LOG.warn("{}: dropped a connection from {} that did not introduce itself within {} ms", self,
                            h.channel().socket().getRemoteSocketAddress(), config.connectTimeout().toMillis());
                    h.close();
                    it.remove();
                }
                continue;
            }
            it.remove();
            Hello peer = h.peerHello();
            String from = String.valueOf(h.channel().socket().getRemoteSocketAddress());
            if (peer == null || peer.role() != Hello.WORKER || peer.workers() != config.workers()
                    || peer.servers() != config.servers() || peer.id() < 0 || peer.id() >= config.workers()) {
                LOG.warn("{}: dropped a connection from {}: it is {}, but this server serves a job of {} workers and {} servers",
                        self, from, peer == null ? "not a switchml collectives peer" : peer.describe(), config.workers(),
                        config.servers());
                h.close();
                continue;
            }
            if (workers[peer.id()] != null) {
                LOG.warn("{}: dropped a second connection claiming to be rank {} (from {})", self, peer.id(), from);
                h.close();
                continue;
            }
            Link link = new Link(h.channel(), "rank " + peer.id() + " (" + from + ")", peer.id());
            poller.add(link);
            workers[peer.id()] = link;
        }
    }

    /** Tells every connected worker why the all-reduce failed, then closes their connections. */
    private void giveUp(ShardReduction.Failure f) {
        LOG.warn("{}: {}", self, f.getMessage());
        ByteBuffer report = f.error.frame(reduction.sequence());
        List<Transfers> flushes = new ArrayList<>();
        for (int r = 0; r < workers.length; r++) {
            if (workers[r] != null) {
                Transfers t = new Transfers();
                reduction.finishFrame(r, t); // the report must start on a frame boundary
                flushes.add(t.send(workers[r], report.duplicate(), "the error report"));
            }
        }
        Deadline deadline = Deadline.after(REPORT_FLUSH);
        while (!flushes.isEmpty()) {
            for (Iterator<Transfers> it = flushes.iterator(); it.hasNext(); ) {
                try {
                    if (it.next().advance()) {
                        it.remove();
                    }
                } catch (LinkFailure e) {
                    it.remove(); // that worker is gone; the others still get the report
                }
            }
            try {
                if (flushes.isEmpty() || !poller.await(deadline)) {
                    break;
                }
            } catch (IOException e) {
                break; // the report is best effort; closing the connections says the rest
            }
        }
        lingerAndDrop(deadline);
        reduction.reset();
    }

    /**
     * Closes every worker connection without discarding what the worker may still be sending:
     * closing a socket with unread data makes TCP reset the connection, and a reset can reach the
     * worker before it has read the report. So: end our side, read and discard until the worker
     * closes (it does once it has read the report) or the deadline, then close.
     */
    private void lingerAndDrop(Deadline deadline) {
        ByteBuffer discard = ByteBuffer.allocate(64 << 10);
        List<Integer> open = new ArrayList<>();
        for (int r = 0; r < workers.length; r++) {
            if (workers[r] != null) {
                try {
                    workers[r].channel().shutdownOutput();
                    open.add(r);
                } catch (IOException e) {
                    drop(r);
                }
            }
        }
        try {
            while (!open.isEmpty()) {
                for (Iterator<Integer> it = open.iterator(); it.hasNext(); ) {
                    int r = it.next();
                    try {
                        while (workers[r].read(discard.clear()) > 0) {
                            // Discarding the rest of a push the server gave up on.
                        }
                        workers[r].wantRead();
                    } catch (LinkFailure e) {
                        drop(r);
                        it.remove();
                    }
                }
                if (open.isEmpty() || !poller.await(deadline)) {
                    break;
                }
            }
        } catch (IOException e) {
            // Best effort; close below.
        }
        for (int r = 0; r < workers.length; r++) {
            drop(r);
        }
    }

    private void drop(int rank) {
        Link link = workers[rank];
        if (link != null) {
            poller.remove(link);
            link.close();
            workers[rank] = null;
        }
    }
}
