package io.switchml.client;

import io.switchml.api.AllReduce;
import io.switchml.api.FallbackProvider;
import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;
import io.switchml.api.SwitchUnavailableException;
import io.switchml.api.Tensors;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A worker's membership in one job, and the all-reduce through the aggregation switch.
 *
 * <p>{@link #connect} joins the job at the first controller of {@code switchml.controllers} (or
 * {@code switchml.controller}) and returns once every worker has joined; see {@link SwitchSession}
 * for what happens at one switch. The context is thread-safe; operations run in submission order.
 *
 * <p><b>Failover.</b> With more than one controller listed, or {@code switchml.fallback=ring},
 * losing the switch (its controller's watch breaks, or no result arrives for
 * {@code failoverDetectionMs} and the controller cannot say otherwise) does not fail the job: every
 * worker joins the same job at the next controller, the workers agree there on which blocks of the
 * unfinished all-reduces each already holds ({@link RecoveryPlan}), blocks nobody holds are
 * redone from every worker's input, blocks some hold are copied from one of them, and the rest of
 * the work carries on at the new switch. Each block is thus summed exactly once, with the same
 * result on every worker. When no switch is left, the job goes on with the fallback ring, or every
 * pending and later operation fails with {@link SwitchUnavailableException} naming the switches
 * tried. Without failover, a lost switch fails the job as {@link SwitchSession} describes.
 */
public final class SwitchMLContext implements SwitchMLConnection {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SwitchMLContext.class);
    /** How many finished all-reduces' lengths are kept, for failovers that find another worker behind. */
    private static final int FINISHED_HISTORY = 1024;

    private final SwitchMLConfig config;
    private final WorkerStatistics statistics;
    private final boolean failoverEnabled;
    private final ExecutorService failoverThread;
    // Guarded by this:
    private AllReduce active;
    private SwitchSession session;
    /** Index in {@code config.controllers()} of the switch in use, or of the last one tried. */
    private int controllerIndex;
    private long nextSequence;
    /** Unfinished all-reduces, by sequence; only tracked with failover enabled. */
    private final TreeMap<Long, PendingOperation> pending = new TreeMap<>();
    /** Submitted while a failover runs; sent once it is over. */
    private final List<PendingOperation> parked = new ArrayList<>();
    private final Map<Long, Integer> finishedLengths = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Integer> eldest) {
            return size() > FINISHED_HISTORY;
        }
    };
    /** Non-null while a failover runs; completed when it is over. */
    private Failover failover;
    /** Set when no switch is left and there is no fallback. */
    private SwitchMLException noSwitchLeft;
    private FallbackProvider.Endpoint fallback;
    private List<String> fallbackEndpoints = List.of();
    private volatile boolean closed;

    private SwitchMLContext(SwitchMLConfig config, WorkerStatistics statistics) {
        this.config = PathSizing.resolve(config);
        this.statistics = statistics;
        this.failoverEnabled = config.failoverEnabled();
        this.failoverThread = failoverEnabled ? Executors.newSingleThreadExecutor(r -> {
            Thread thread = new Thread(r, "switchml-failover-rank" + config.rank());
            thread.setDaemon(true);
            return thread;
        }) : null;
    }

    /** Joins the job described by {@code config}; returns once every worker has joined. */
    public static SwitchMLContext connect(SwitchMLConfig config) {
        if (!config.shards().isEmpty()) {
            throw new IllegalArgumentException(SwitchMLConfig.Key.SHARDS.property() + " names " + config.shards().size()
                    + " shards: join a sharded switch with ShardedSwitchML.connect (or SwitchMLConnection.connect, which picks)");
        }
        return connect(config, new WorkerStatistics());
    }

    /** The same, counting into {@code statistics} (shared by the shards of a {@link ShardedSwitchML}). */
    static SwitchMLContext connect(SwitchMLConfig config, WorkerStatistics statistics) {
        SwitchMLContext context = new SwitchMLContext(config, statistics);
        try {
            SwitchSession first = context.join(0, true);
            synchronized (context) {
                context.session = first;
                context.active = first;
            }
            if (config.fallback() != SwitchMLConfig.Fallback.NONE) {
                context.prepareFallback(first);
            }
            LOG.info("rank {} of {} joined job '{}' (job number {}) at {}", config.rank(), config.workers(), config.job(),
                    first.jobNumber(), first.controller());
            return context;
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
    }

    /** Joins the job at controller {@code index}. */
    /**
     * Joins the job at controller {@code index}; {@code waitForController}: while none listens there (a worker
     * started before its switch), keep trying until the join timeout. A failover wants the next switch at once.
     */
    SwitchSession join(int index, boolean waitForController) {
        return SwitchSession.join(config, config.controllers().get(index), statistics,
                failoverEnabled ? this::switchLost : null, waitForController);
    }

    /** Binds this worker's fallback endpoint and learns everybody's, through the controller. */
    private void prepareFallback(SwitchSession first) {
        FallbackProvider.Endpoint endpoint = FallbackProvider.named(config.fallback().settingName()).bind(
                new FallbackProvider.Job(config.rank(), config.workers(), config.joinTimeout(), config.operationTimeout()),
                first.localAddress());
        synchronized (this) {
            fallback = endpoint;
        }
        List<String> endpoints = new ArrayList<>();
        for (int r = 0; r < workers(); r++) {
            byte[] mine = r == rank() ? endpoint.address().getBytes(StandardCharsets.UTF_8) : new byte[0];
            endpoints.add(new String(first.broadcast(mine, r), StandardCharsets.UTF_8));
        }
        synchronized (this) {
            fallbackEndpoints = List.copyOf(endpoints);
        }
    }


    /** The job number the current switch's controller assigned (-1 once the job runs on the fallback ring). */
    public synchronized int jobNumber() {
        return session != null ? session.jobNumber() : -1;
    }

    /**
     * Slots each worker thread keeps in flight at the current switch: the config's
     * {@code slotsPerThread}, or fewer when the switch's aggregator pool could not give the job its
     * whole window (admission control).
     */
    public synchronized int slotsPerThread() {
        return session != null ? session.slotsPerThread() : config.slotsPerThread();
    }

    /** The configuration in use: the one given, with the packet size and window chosen where they were auto. */
    @Override
    public SwitchMLConfig config() {
        return config;
    }

    /** The job's session at its current switch. */
    synchronized SwitchSession session() {
        return session;
    }

    @Override
    public WorkerStatistics statistics() {
        return statistics;
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(FloatBuffer in, FloatBuffer out, ReduceOp op) {
        Tensors.checkOutput(in.remaining(), out.remaining());
        return submit(s -> PendingOperation.floats(s, in, out, op), backend -> backend.allReduceAsync(in, out, op));
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(IntBuffer in, IntBuffer out, ReduceOp op) {
        Tensors.checkOutput(in.remaining(), out.remaining());
        return submit(s -> PendingOperation.ints(s, in, out, op), backend -> backend.allReduceAsync(in, out, op));
    }

    /*
     * Submission is synchronized: taking the sequence number and handing the operation on happen
     * as one step, so every worker's operations keep one order even when several threads submit.
     */
    private synchronized CompletableFuture<Void> submit(Function<Long, PendingOperation> track,
                                                        Function<AllReduce, CompletableFuture<Void>> direct) {
        if (!failoverEnabled) {
            nextSequence++;
            return active != null ? direct.apply(active)
                    : CompletableFuture.failedFuture(new IllegalStateException("the SwitchML context is closed"));
        }
        PendingOperation p = track.apply(nextSequence++);
        if (closed) {
            p.result.completeExceptionally(new IllegalStateException("the SwitchML context is closed"));
            return p.result;
        }
        if (noSwitchLeft != null) {
            p.result.completeExceptionally(new SwitchUnavailableException(noSwitchLeft.getMessage(), noSwitchLeft));
            return p.result;
        }
        pending.put(p.sequence, p);
        p.result.whenComplete((v, e) -> finished(p));
        if (failover != null) {
            parked.add(p);
        } else {
            p.sendTo(active);
        }
        return p.result;
    }

    private synchronized void finished(PendingOperation p) {
        pending.remove(p.sequence);
        finishedLengths.put(p.sequence, p.length);
    }

    /** A session lost its switch: start a failover, or tell the one in progress that its new switch is gone. */
    private void switchLost(SwitchSession lost, SwitchUnavailableException why) {
        Failover started;
        synchronized (this) {
            if (closed) {
                return;
            }
            if (failover != null) {
                failover.switchLost(lost, why);
                return;
            }
            if (lost != session) {
                return;
            }
            failover = new Failover(this, lost, why);
            started = failover;
        }
        failoverThread.execute(started::run);
    }

    // What Failover reads and changes, under this context's lock.

    synchronized List<PendingOperation> unfinished() {
        List<PendingOperation> list = new ArrayList<>();
        for (PendingOperation p : pending.values()) {
            if (!p.result.isDone()) {
                list.add(p);
            }
        }
        return list;
    }

    synchronized long lastSubmitted() {
        return nextSequence - 1;
    }

    /** The length of all-reduce {@code sequence}, unfinished or recently finished here; -1 if forgotten. */
    synchronized int lengthOf(long sequence) {
        PendingOperation p = pending.get(sequence);
        if (p != null) {
            return p.length;
        }
        return finishedLengths.getOrDefault(sequence, -1);
    }

    synchronized int controllerIndex() {
        return controllerIndex;
    }

    synchronized void triedController(int index) {
        controllerIndex = index;
    }

    synchronized FallbackProvider.Endpoint fallback() {
        return fallback;
    }

    synchronized List<String> fallbackEndpoints() {
        return fallbackEndpoints;
    }

    boolean isClosed() {
        return closed;
    }

    /** The failover moved the job to {@code backend}: send what is left there, in order. */
    synchronized void failoverDone(AllReduce backend, List<PendingOperation> resend) {
        if (closed) {
            backend.close(); // closed while the failover ran: nothing will use it
            failover.finished().complete(null);
            failover = null;
            return;
        }
        TreeMap<Long, PendingOperation> toSend = new TreeMap<>();
        resend.forEach(p -> toSend.put(p.sequence, p));
        parked.forEach(p -> toSend.put(p.sequence, p));
        parked.clear();
        active = backend;
        session = backend instanceof SwitchSession s ? s : null;
        Failover done = failover;
        failover = null;
        for (PendingOperation p : toSend.values()) {
            if (!p.result.isDone()) {
                p.sendTo(backend);
            }
        }
        done.finished().complete(null);
    }

    /** The failover found no switch left: everything unfinished, and everything later, fails. */
    synchronized void failoverFailed(SwitchMLException error) {
        noSwitchLeft = error;
        session = null;
        Failover done = failover;
        failover = null;
        parked.clear();
        for (PendingOperation p : new ArrayList<>(pending.values())) {
            p.supersede();
            p.result.completeExceptionally(error);
        }
        done.finished().complete(null);
    }

    /**
     * A one-element all-reduce through the switch: it completes once every worker's packet arrived, and
     * the switch then answers all workers at once, so they leave it within microseconds of each other.
     * (The controller's barrier releases them one gRPC reply at a time, milliseconds apart, which is
     * what an all-reduce timed right after a barrier would measure.) Like any all-reduce it has the
     * operation timeout, explains a stall, and survives a failover.
     */
    @Override
    public void barrier() {
        allReduce(new int[1], ReduceOp.SUM);
    }

    @Override
    public byte[] broadcast(byte[] value, int root) {
        if (root < 0 || root >= workers()) {
            throw new IllegalArgumentException("root " + root + " outside 0.." + (workers() - 1));
        }
        return control().broadcast(value, root);
    }

    /** The backend for a barrier or broadcast: after a failover in progress, if any. */
    private AllReduce control() {
        CompletableFuture<Void> moving;
        synchronized (this) {
            moving = failover != null ? failover.finished() : null;
        }
        if (moving != null) {
            long waitMs = config.joinTimeout().toMillis() + config.operationTimeout().toMillis();
            try {
                moving.get(waitMs, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SwitchMLException("interrupted while waiting for a failover", e);
            } catch (ExecutionException | TimeoutException e) {
                throw new SwitchMLException("the failover in progress did not finish within " + waitMs + " ms", e);
            }
        }
        synchronized (this) {
            if (noSwitchLeft != null) {
                throw new SwitchUnavailableException(noSwitchLeft.getMessage(), noSwitchLeft);
            }
            return active;
        }
    }

    /**
     * Drops out of the job as a killed process does, for a supervisor that knows this rank's work is lost
     * (its data source or its process is going away) and wants the other ranks told now rather than
     * when their operations time out: no Leave; the connection to the controller is cut, so the
     * controller reports this rank as died and aborts the job for the others; sockets close. {@link #close()}
     * is the orderly way out, and after this it does nothing.
     */
    public void abandon() {
        SwitchSession s;
        synchronized (this) {
            closed = true;
            s = session;
        }
        s.abandon();
    }

    /** Leaves the job and releases sockets and threads. Pending operations fail. */
    @Override
    public void close() {
        AllReduce current;
        FallbackProvider.Endpoint endpoint;
        synchronized (this) {
            if (closed && active == null && fallback == null) {
                return;
            }
            closed = true;
            current = active;
            endpoint = fallback;
            active = null;
            fallback = null;
            IllegalStateException closing = new IllegalStateException("the SwitchML context was closed");
            for (PendingOperation p : pending.values()) {
                p.result.completeExceptionally(closing);
            }
        }
        if (failoverThread != null) {
            failoverThread.shutdownNow();
        }
        try {
            if (current != null) {
                current.close();
            }
        } finally {
            if (endpoint != null) {
                endpoint.close();
            }
        }
    }
}
