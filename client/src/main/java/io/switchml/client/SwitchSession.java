package io.switchml.client;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.netty.channel.Channel;
import io.switchml.api.AllReduce;
import io.switchml.api.ControlPlaneException;
import io.switchml.api.RankLeftException;
import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;
import io.switchml.api.SwitchUnavailableException;
import io.switchml.api.Tensors;
import io.switchml.api.WorkerFailedException;
import io.switchml.control.ControllerAddress;
import io.switchml.controller.proto.JobEvent;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.protocol.PacketKey;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.SecretDigest;
import io.switchml.udp.Offload;
import io.switchml.udp.UdpOffloads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A worker's membership in one job at one switch, and the all-reduce through it. The public
 * {@link SwitchMLContext} holds one at a time and replaces it when the job fails over to another
 * switch.
 *
 * <p>{@link #join} binds one UDP socket per worker thread, joins the job at the controller
 * (which waits for every rank and installs the job in the switch), and returns. Each all-reduce is
 * cut into contiguous shares, one per worker thread; thread t uses the switch's slots
 * [t * window, (t + 1) * window). Operations run in submission order.
 *
 * <p>If an all-reduce fails by timeout, the switch's slots may hold partial sums, so the session
 * refuses further work. The timeout's message says which ranks the switch is still waiting for, as
 * far as the controller can tell. An {@link UnrepresentableValueException} leaves the session usable.
 *
 * <p>Liveness: from {@code join} to {@code close} the session holds a watch at the controller (a
 * gRPC server stream on a connection with keepalive). When another rank of the job dies, the
 * controller aborts the job and says so on the watch: every pending and later operation fails at
 * once with {@link WorkerFailedException}. When the watch itself breaks (the switch process died,
 * restarted or became unreachable), they fail with {@link SwitchUnavailableException}, unless the
 * session has a {@link SwitchLossListener}: then nothing fails, the listener is told, and it
 * {@link #stop()}s the session to move the job elsewhere. The operation timeout stays the backstop.
 */
final class SwitchSession implements AllReduce {
    private static final Logger LOG = LoggerFactory.getLogger(SwitchSession.class);
    /** How long a failed barrier or broadcast waits for the watch to say the job was lost. */
    private static final long JOB_FAILURE_WAIT_MS = 1_000;

    private final SwitchMLConfig config;
    private final ControlPlaneClient control;
    private final WorkerSockets sockets;
    /** The window of each worker thread: the config's, or fewer when the switch's admission control granted fewer. */
    private final int slotsPerThread;
    /** The largest float32 share a worker thread sends in one round trip, as the switch granted it (0: none). */
    private final int oneRoundElements;
    /** The job skips float32 blocks that are zero at every worker (the controller checked every rank asked). */
    private final boolean skipZeroBlocks;
    private final List<WorkerLane> lanes = new ArrayList<>();
    private final ExecutorService completions;
    private final WorkerStatistics statistics;
    /** Told when this switch is lost; null: the loss fails every operation instead. */
    private final SwitchLossListener lossListener;
    private final AtomicLong operationSequence = new AtomicLong();
    private final AtomicLong barrierSequence = new AtomicLong();
    private final int jobNumber;
    private final InetSocketAddress[] switchEndpoints;
    private volatile RuntimeException broken;
    private volatile boolean closed;
    /** Identifies this run of the job at the controller (job numbers are reused). */
    private final long jobId;
    /** Completed when the job is lost: a rank died, or the controller went away. */
    private final CompletableFuture<SwitchMLException> jobFailure = new CompletableFuture<>();
    private final JobWatch watch;
    private TransportReporter transportReporter;
    /** The switch's shared-memory port, or null: the worker threads use UDP. */
    private final SharedMemoryPort sharedMemory;
    /** The key of the job's authenticated packets; null when they carry no tags. */
    private final PacketKey packetKey;
    private final StallDiagnosis stallDiagnosis;
    /** Submitted and not yet removed once complete, by sequence: what a rank that left may leave waiting. */
    private final java.util.concurrent.ConcurrentSkipListMap<Long, Operation<?>> inFlight =
            new java.util.concurrent.ConcurrentSkipListMap<>();
    /** The first RANK_LEFT event (by fewest finished all-reduces); guarded by this. */
    private JobEvent leftEvent;

    /** Where a session reports that its switch is gone. */
    interface SwitchLossListener {
        /** Called once, on a gRPC or event-loop thread; the session's operations are left pending. */
        void switchLost(SwitchSession session, SwitchUnavailableException why);
    }

    private SwitchSession(SwitchMLConfig config, ControlPlaneClient control, WorkerSockets sockets,
                          JoinResponse joined, InetAddress switchAddress, WorkerStatistics statistics,
                          SwitchLossListener lossListener, SharedMemoryPort sharedMemory, PacketKey packetKey) {
        this.config = config;
        this.packetKey = packetKey;
        this.sharedMemory = sharedMemory;
        this.statistics = statistics;
        this.lossListener = lossListener;
        this.control = control;
        this.sockets = sockets;
        this.jobNumber = joined.getJobNumber();
        this.jobId = joined.getJobId();
        this.watch = new JobWatch(control, config, jobNumber, jobId, new JobWatch.Listener() {
            @Override
            public void ranksFailed(WorkerFailedException error) {
                jobFailed(error);
            }

            @Override
            public void rankLeft(JobEvent event) {
                SwitchSession.this.rankLeft(event);
            }

            @Override
            public void switchLost(SwitchUnavailableException error) {
                if (!closed) {
                    SwitchSession.this.switchLost(error);
                }
            }
        }, lossListener != null);
        this.slotsPerThread = grantedWindow(config, joined);
        this.oneRoundElements = joined.getOneRoundElements();
        this.skipZeroBlocks = joined.getSkipZeroBlocks();
        this.stallDiagnosis = new StallDiagnosis(control, jobNumber, jobId);
        this.switchEndpoints = new InetSocketAddress[config.threads()];
        for (int t = 0; t < config.threads(); t++) {
            int port = joined.getSwitchPorts(t % joined.getSwitchPortsCount());
            switchEndpoints[t] = new InetSocketAddress(switchAddress, port);
        }
        this.completions = Executors.newSingleThreadExecutor(r -> {
            Thread thread = new Thread(r, "switchml-completions-rank" + config.rank());
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Joins the job described by {@code config} at the controller {@code controllerAddress}; returns
     * once every worker has joined.
     */
    static SwitchSession join(SwitchMLConfig config, ControllerAddress controllerAddress, WorkerStatistics statistics,
                              SwitchLossListener lossListener, boolean waitForController) {
        if (config.authenticatePackets() && config.jobSecret().isEmpty()) {
            // Checked here, not when the settings are read: a launcher adds the job's secret to them before the join.
            throw new SwitchMLException("rank " + config.rank() + " of job '" + config.job() + "': "
                    + SwitchMLConfig.Key.AUTHENTICATE_PACKETS.property() + "=on needs a job secret, from which the packets'"
                    + " key derives: set " + SwitchMLConfig.Key.JOB_SECRET_FILE.property() + " (the same at every rank)");
        }
        InetAddress controllerIp = Routes.resolveIpv4(controllerAddress.host());
        InetAddress localIp = Routes.localAddress(config, controllerIp);
        ControlPlaneClient control = new ControlPlaneClient(controllerAddress, config.credentials());
        WorkerSockets sockets = null;
        try {
            sockets = WorkerSockets.bind(config, localIp);
            JobParameters parameters = JobParameters.newBuilder()
                    .setNumWorkers(config.workers())
                    .setElementsPerPacket(config.elementsPerPacket())
                    .setSlotsPerThread(config.slotsPerThread())
                    .setThreads(config.threads())
                    .setOneRoundElements(config.oneRoundElements())
                    .setSkipZeroBlocks(config.skipZeroBlocks())
                    .setLaneBits(config.lanes())
                    .setAuthenticatePackets(config.authenticatePackets())
                    .build();
            JoinResponse joined = control.join(config.job(), config.rank(), parameters, localIp.getHostAddress(),
                    sockets.ports(), config.joinTimeout(), waitForController);
            InetAddress switchIp = WorkerSockets.switchAddress(joined.getSwitchAddress(), controllerIp);
            SharedMemoryPort sharedMemory;
            PacketKey packetKey;
            try {
                packetKey = packetKey(config, joined);
                sharedMemory = SharedMemoryPort.choose(config, joined);
            } catch (SwitchMLException e) {
                try {
                    control.leave(joined.getJobNumber(), joined.getJobId(), config.rank(), 0);
                } catch (RuntimeException leaving) {
                    e.addSuppressed(leaving);
                }
                throw e;
            }
            SwitchSession context = new SwitchSession(config, control, sockets, joined, switchIp, statistics, lossListener,
                    sharedMemory, packetKey);
            try {
                context.start();
                context.watch.open();
            } catch (RuntimeException e) {
                context.close();
                throw e;
            }
            LOG.info("rank {} joined job '{}' as job number {}; switch at {}, {}", config.rank(), config.job(),
                    joined.getJobNumber(), switchIp, sharedMemory != null ? "through its shared-memory port in "
                            + joined.getIpcDirectory() : "over UDP");
            return context;
        } catch (RuntimeException e) {
            if (sockets != null) {
                sockets.close();
            }
            control.close();
            throw e;
        }
    }

    private void start() {
        PayloadSize size = config.payloadSize();
        FaultInjection faults = config.faultInjection();
        if (sharedMemory != null) {
            sharedMemory.attach();
        }
        statistics.transport = sharedMemory != null ? "ipc" : "udp";
        // Fault injection acts on each datagram a lane sends, so a run of packets goes as one only without it.
        boolean segmentation = sharedMemory == null && !faults.enabled() && config.udpSegmentation()
                .use("udpSegmentation", NettyTransport.segmentation(), UdpOffloads.segmentationMissing());
        for (int t = 0; t < sockets.count(); t++) {
            if (sharedMemory == null && config.udpGro() == Offload.AUTO && NettyTransport.epoll() && !sockets.coalescing(t)) {
                statistics.udpGroOff.increment();
            }
            Channel channel = sockets.channel(t);
            channel.connect(switchEndpoints[t]).syncUninterruptibly();
            // The shared-memory port's link, in place of the socket for packets and results.
            IpcLink link = sharedMemory == null ? null
                    : sharedMemory.link(t, t * slotsPerThread, slotsPerThread, statistics, config.ipcSpinNanos());
            // Shared memory has no link to congest.
            boolean congestionControl = sharedMemory == null
                    && config.congestion().mode().enabledFor(switchEndpoints[t].getAddress());
            WorkerLane lane = new WorkerLane(t, slotsPerThread, size, jobNumber, config, congestionControl, link,
                    segmentation, sockets.coalescing(t), statistics, this::laneFailed, lossListener == null ? null : this::switchSilent, channel,
                    switchEndpoints[t], packetKey);
            if (faults.enabled()) {
                // Between the socket and the lane: sees every datagram the lane sends and receives.
                channel.pipeline().addLast(new FaultInjector(faults, config.rank(), t, statistics));
            }
            channel.pipeline().addLast(lane);
            lanes.add(lane);
        }
        transportReporter = TransportReporter.start(control, jobNumber, jobId, config.rank(), statistics, sockets.channel(0).eventLoop());
    }

    @Override
    public int rank() {
        return config.rank();
    }

    @Override
    public int workers() {
        return config.workers();
    }

    /** The job number the controller assigned. */
    int jobNumber() {
        return jobNumber;
    }

    ControllerAddress controller() {
        return control.address();
    }

    /**
     * Worker thread {@code thread}'s channel, connected to the switch: what it sends leaves from this worker's
     * address and port (the tests of authenticated packets send through it as a host that spoofs them would).
     */
    Channel channel(int thread) {
        return sockets.channel(thread);
    }

    /** The switch's UDP endpoint that worker thread {@code thread} sends to. */
    InetSocketAddress switchEndpoint(int thread) {
        return switchEndpoints[thread];
    }

    /** The IPv4 address this worker's sockets are bound to (the one that routes to this switch). */
    InetAddress localAddress() {
        return sockets.localAddress();
    }

    /** How many all-reduces have been submitted; the next one gets this number. */
    long submitted() {
        return operationSequence.get();
    }

    /*
     * Submission is synchronized: taking the sequence number and queueing on every lane happen as
     * one step, so all lanes (and the lanes of every other worker) see operations in one order even
     * when several threads submit at once.
     */
    @Override
    public synchronized CompletableFuture<Void> allReduceAsync(FloatBuffer in, FloatBuffer out, ReduceOp op) {
        Tensors.checkOutput(in.remaining(), out.remaining());
        long sequence = operationSequence.getAndIncrement();
        return submit(new FloatOperation(sequence, op, in, out, workers(), lanes.size(), completions,
                describe(sequence, "float32", in.remaining(), op), config.lanes() == 16));
    }

    @Override
    public synchronized CompletableFuture<Void> allReduceAsync(IntBuffer in, IntBuffer out, ReduceOp op) {
        Tensors.checkOutput(in.remaining(), out.remaining());
        long sequence = operationSequence.getAndIncrement();
        return submit(new IntOperation(sequence, op, in, out, workers(), lanes.size(), completions,
                describe(sequence, "int32", in.remaining(), op)));
    }

    private String describe(long sequence, String type, int length, ReduceOp op) {
        return "all-reduce #" + sequence + " (" + op + " of " + length + " " + type + ") of job '" + config.job()
                + "' on rank " + rank();
    }

    private CompletableFuture<Void> submit(Operation<?> operation) {
        if (closed) {
            operation.future.completeExceptionally(new IllegalStateException("the SwitchML context is closed"));
            return operation.future;
        }
        SwitchMLException lost = jobFailure.getNow(null);
        // A lost switch with a listener fails nothing: the listener's stop() collects what was queued.
        if (lost != null && !(lossListener != null && lost instanceof SwitchUnavailableException)) {
            operation.future.completeExceptionally(Failures.again(lost));
            return operation.future;
        }
        if (leftEvent != null && operation.sequence >= leftEvent.getLeftOperations()) {
            operation.future.completeExceptionally(rankLeft(leftEvent, "submits " + operation.description()));
            return operation.future;
        }
        RuntimeException error = broken;
        if (error != null) {
            operation.future.completeExceptionally(new SwitchMLException(
                    "this context failed earlier and can no longer be used; close it and join again", error));
            return operation.future;
        }
        statistics.operations.increment();
        // Whole blocks per lane, so every lane but the last carries only full packets (k: values per block).
        int k = operation.valuesPerPacket(config.elementsPerPacket());
        int blocks = (operation.length + k - 1) / k;
        int lanesCount = lanes.size();
        inFlight.put(operation.sequence, operation);
        operation.future.whenComplete((v, e) -> inFlight.remove(operation.sequence));
        for (int t = 0; t < lanesCount; t++) {
            int from = (int) Math.min(operation.length, (long) blocks * t / lanesCount * k);
            int to = (int) Math.min(operation.length, (long) blocks * (t + 1) / lanesCount * k);
            lanes.get(t).submit(new LaneTask(operation, from, to, config.elementsPerPacket(), slotsPerThread, oneRoundElements,
                    skipZeroBlocks));
        }
        return operation.future.exceptionallyCompose(stallDiagnosis::explain);
    }

    /**
     * A rank left: all-reduces it finished complete here too (the switch keeps their results for
     * retransmission), but one it never finished cannot. Fails at once what waits on it, and later
     * submissions from that number on; synchronized with submission so none slips between.
     */
    private synchronized void rankLeft(JobEvent event) {
        if (leftEvent == null || event.getLeftOperations() < leftEvent.getLeftOperations()) {
            leftEvent = event;
        }
        for (Operation<?> waiting : inFlight.tailMap(event.getLeftOperations(), true).values()) {
            if (!waiting.future.isDone()) {
                jobFailed(rankLeft(event, "waits on " + waiting.description()));
                return;
            }
        }
    }

    private RankLeftException rankLeft(JobEvent event, String waiting) {
        return new RankLeftException(config.job(), jobNumber, event.getLeftRank(), event.getLeftOperations(), rank(), waiting);
    }

    /** The switch is gone: the listener takes over, or else everything pending and later fails. */
    private void switchLost(SwitchUnavailableException error) {
        if (lossListener == null) {
            jobFailed(error);
        } else if (jobFailure.complete(error)) {
            watch.jobLost(error);
            lossListener.switchLost(this, error);
        }
    }

    /** A worker thread heard nothing for the failover detection time: the watch asks the controller. */
    private void switchSilent() {
        if (!closed && !jobFailure.isDone()) {
            watch.switchSilent();
        }
    }

    /**
     * Stops every worker thread without failing its work, for a failover: no packet goes out any
     * more. Returns, per all-reduce still unfinished on some worker thread (by its number), the
     * blocks whose results this worker already holds; all-reduces not listed are finished here.
     */
    Map<Long, BitSet> stop(Duration timeout) {
        List<LaneEngine.Snapshot> snapshots = new ArrayList<>();
        for (WorkerLane lane : lanes) {
            try {
                snapshots.add(lane.stop().get(timeout.toMillis(), TimeUnit.MILLISECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SwitchMLException("interrupted while stopping worker thread " + lane.index(), e);
            } catch (ExecutionException | TimeoutException e) {
                throw new SwitchMLException("worker thread " + lane.index() + " did not stop within " + timeout.toMillis()
                        + " ms", e);
            }
        }
        return HeldBlocks.of(snapshots, config.elementsPerPacket());
    }

    /** The job is lost: fails everything pending now, and everything later. The first failure stands. */
    private void jobFailed(SwitchMLException error) {
        if (!jobFailure.complete(error)) {
            return;
        }
        watch.jobLost(error);
        laneFailed(error);
    }

    private void laneFailed(RuntimeException error) {
        if (broken == null) {
            broken = error;
            LOG.warn("{}", error.getMessage());
        }
        for (WorkerLane lane : lanes) {
            lane.abortAll(error);
        }
    }

    @Override
    public void barrier() {
        controlCall(() -> {
            control.barrier(jobNumber, jobId, rank(), barrierSequence.getAndIncrement(), config.joinTimeout());
            return null;
        });
    }

    @Override
    public byte[] broadcast(byte[] value, int root) {
        if (root < 0 || root >= workers()) {
            throw new IllegalArgumentException("root " + root + " outside 0.." + (workers() - 1));
        }
        return controlCall(() -> control.broadcast(jobNumber, jobId, rank(), root, barrierSequence.getAndIncrement(), value,
                config.joinTimeout()));
    }

    /**
     * A barrier or broadcast: refused once the job is lost; when the controller fails it because
     * the job was aborted or is unreachable, the watch's account (which rank died, or that the
     * switch is gone) is raised instead, if it arrives within a moment.
     */
    private <T> T controlCall(Supplier<T> call) {
        SwitchMLException lost = jobFailure.getNow(null);
        if (lost != null) {
            throw Failures.again(lost);
        }
        try {
            return call.get();
        } catch (ControlPlaneException e) {
            Status.Code code = e.getCause() instanceof StatusRuntimeException sre ? sre.getStatus().getCode() : Status.Code.UNKNOWN;
            if (code != Status.Code.ABORTED && code != Status.Code.UNAVAILABLE && code != Status.Code.NOT_FOUND
                    && code != Status.Code.CANCELLED) {
                throw e;
            }
            try {
                lost = jobFailure.get(JOB_FAILURE_WAIT_MS, TimeUnit.MILLISECONDS);
            } catch (TimeoutException | ExecutionException notLost) {
                throw e;
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw e;
            }
            SwitchMLException failure = Failures.again(lost);
            failure.addSuppressed(e);
            throw failure;
        }
    }

    /** The window the controller granted (0 from a controller without admission control: the config's). */
    /**
     * The key of the job's authenticated packets (docs/ARCHITECTURE.md section 19), from the job secret's digest
     * and the salt the switch drew for this run; null when this worker did not ask for them.
     *
     * @throws SwitchMLException when the switch returned no salt: it does not authenticate packets
     */
    private static PacketKey packetKey(SwitchMLConfig config, JoinResponse joined) {
        if (!config.authenticatePackets()) {
            return null;
        }
        if (joined.getPacketKeySalt().isEmpty()) {
            throw new SwitchMLException("rank " + config.rank() + " of job '" + config.job() + "': "
                    + SwitchMLConfig.Key.AUTHENTICATE_PACKETS.property() + "=on, but the switch answered the join without"
                    + " a packet key salt: it does not authenticate packets (an older switch?). Update the switch, or run"
                    + " the job with authenticatePackets=off");
        }
        try {
            return PacketKey.derive(SecretDigest.of(config.jobSecret()), joined.getPacketKeySalt().toByteArray(),
                    config.payloadSize());
        } catch (IllegalArgumentException e) {
            throw new SwitchMLException("rank " + config.rank() + " of job '" + config.job() + "': cannot derive the"
                    + " packet key: " + e.getMessage(), e);
        }
    }

    private static int grantedWindow(SwitchMLConfig config, JoinResponse joined) {
        int granted = joined.getSlotsPerThread();
        if (granted == 0 || granted == config.slotsPerThread()) {
            return config.slotsPerThread();
        }
        LOG.warn("rank {}: job '{}' runs with {} slots per thread instead of {}: {}", config.rank(), config.job(),
                granted, config.slotsPerThread(), joined.getAdmission());
        return granted;
    }

    /** Slots each worker thread keeps in flight (see {@link SwitchMLContext#slotsPerThread()}). */
    int slotsPerThread() {
        return slotsPerThread;
    }

    /** This session's sockets, one per worker thread. */
    WorkerSockets sockets() {
        return sockets;
    }

    /** Drops out of the job without leaving it, as a killed process does ({@link SwitchMLContext#abandon()}). */
    void abandon() {
        closed = true;
        control.close();
        IllegalStateException abandoned = new IllegalStateException("this worker abandoned the job (SwitchMLContext.abandon)");
        for (WorkerLane lane : lanes) {
            lane.abortAll(abandoned);
        }
        sockets.close();
        completions.shutdown();
    }

    /** Leaves the job and releases sockets and threads. Pending operations fail. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // All-reduces finished in order: the others' from here on would wait for this rank in vain.
        long finished = operationSequence.get();
        for (Operation<?> operation : inFlight.values()) {
            // Done but not yet removed: the map is cleaned up after the caller may have seen the result.
            if (!operation.future.isDone()) {
                finished = operation.sequence;
                break;
            }
        }
        if (transportReporter != null) {
            transportReporter.stop();
        }
        RuntimeException closing = new IllegalStateException("the SwitchML context was closed");
        for (WorkerLane lane : lanes) {
            lane.abortAll(closing);
        }
        try {
            // The controller ends the watch when the rank leaves. After the switch went away there is
            // nothing to leave (and a restarted one may run another job under this number).
            if (!(jobFailure.getNow(null) instanceof SwitchUnavailableException)) {
                control.leave(jobNumber, jobId, rank(), finished);
            }
        } catch (SwitchMLException e) {
            LOG.debug("leaving job {} failed: {}", jobNumber, e.getMessage());
        } finally {
            watch.close();
            sockets.close();
            completions.shutdown();
            control.close();
        }
    }
}
