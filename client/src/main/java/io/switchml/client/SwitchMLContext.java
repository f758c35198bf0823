package io.switchml.client;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.switchml.controller.proto.JobEvent;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.protocol.PayloadSize;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A worker's membership in one job, and the all-reduce through the aggregation switch.
 *
 * <p>{@link #connect} binds one UDP socket per worker thread, joins the job at the controller
 * (which waits for every rank and installs the job in the switch), and returns. Each all-reduce is
 * cut into contiguous shares, one per worker thread; thread t uses the switch's slots
 * [t * window, (t + 1) * window). The context is thread-safe; operations run in submission order.
 *
 * <p>If an all-reduce fails by timeout, the switch's slots may hold partial sums, so the context
 * refuses further work; close it and join again. The timeout's message says which ranks the switch
 * is still waiting for, as far as the controller can tell. An {@link UnrepresentableValueException}
 * leaves the context usable.
 *
 * <p>Liveness: from {@code connect} to {@code close} the context holds a watch at the controller (a
 * gRPC server stream on a connection with keepalive). When another rank of the job dies, the
 * controller aborts the job and says so on the watch: every pending and later operation fails at
 * once with {@link WorkerFailedException}. When the watch itself breaks (the switch process died,
 * restarted or became unreachable), they fail with {@link SwitchUnavailableException}. The operation
 * timeout stays the backstop.
 */
public final class SwitchMLContext implements AllReduce {
    private static final Logger LOG = LoggerFactory.getLogger(SwitchMLContext.class);
    /** How long a failed barrier or broadcast waits for the watch to say the job was lost. */
    private static final long JOB_FAILURE_WAIT_MS = 1_000;

    private final SwitchMLConfig config;
    private final ControlPlaneClient control;
    private final EventLoopGroup loops;
    private final List<Channel> channels;
    private final List<WorkerLane> lanes = new ArrayList<>();
    private final ExecutorService completions;
    private final WorkerStatistics statistics = new WorkerStatistics();
    private final AtomicLong operationSequence = new AtomicLong();
    private final AtomicLong barrierSequence = new AtomicLong();
    private final int jobNumber;
    /** The window of each worker thread: the config's, or fewer when the switch's admission control granted fewer. */
    private final int slotsPerThread;
    private final InetSocketAddress[] switchEndpoints;
    private volatile RuntimeException broken;
    private volatile boolean closed;
    /** Identifies this run of the job at the controller (job numbers are reused). */
    private final long jobId;
    /** Completed once the controller has registered this rank's watch. */
    private final CompletableFuture<Void> watching = new CompletableFuture<>();
    /** Completed when the job is lost: a rank died, or the controller went away. */
    private final CompletableFuture<SwitchMLException> jobFailure = new CompletableFuture<>();
    private volatile Runnable cancelWatch;
    private final StallDiagnosis stallDiagnosis;

    private SwitchMLContext(SwitchMLConfig config, ControlPlaneClient control, EventLoopGroup loops,
                            List<Channel> channels, JoinResponse joined, InetAddress switchAddress) {
        this.config = config;
        this.control = control;
        this.loops = loops;
        this.channels = channels;
        this.jobNumber = joined.getJobNumber();
        this.jobId = joined.getJobId();
        this.slotsPerThread = grantedWindow(config, joined);
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

    /** Joins the job described by {@code config}; returns once every worker has joined. */
    public static SwitchMLContext connect(SwitchMLConfig config) {
        ControllerAddress controllerAddress = ControllerAddress.parse(config.controller());
        InetAddress controllerIp = resolveIpv4(controllerAddress.host());
        InetAddress localIp = config.localAddress().isEmpty() ? routeTo(controllerIp) : resolveIpv4(config.localAddress());
        ControlPlaneClient control = new ControlPlaneClient(controllerAddress);
        EventLoopGroup loops = NettyTransport.eventLoops(config.threads(), "switchml-worker-rank" + config.rank());
        List<Channel> channels = new ArrayList<>();
        try {
            List<Integer> ports = new ArrayList<>();
            for (int t = 0; t < config.threads(); t++) {
                Channel channel = bind(loops, config, localIp);
                channels.add(channel);
                ports.add(((InetSocketAddress) channel.localAddress()).getPort());
            }
            JobParameters parameters = JobParameters.newBuilder()
                    .setNumWorkers(config.workers())
                    .setElementsPerPacket(config.elementsPerPacket())
                    .setSlotsPerThread(config.slotsPerThread())
                    .setThreads(config.threads())
                    .build();
            JoinResponse joined = control.join(config.job(), config.rank(), parameters, localIp.getHostAddress(), ports,
                    config.joinTimeout());
            InetAddress switchIp = switchAddress(joined.getSwitchAddress(), controllerIp);
            SwitchMLContext context = new SwitchMLContext(config, control, loops, channels, joined, switchIp);
            try {
                context.start();
                context.watch();
            } catch (RuntimeException e) {
                context.close();
                throw e;
            }
            LOG.debug("rank {} joined job '{}' as job number {}; switch at {}", config.rank(), config.job(),
                    joined.getJobNumber(), switchIp);
            return context;
        } catch (RuntimeException e) {
            channels.forEach(Channel::close);
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            control.close();
            throw e;
        }
    }

    /** The window the controller granted (0 from a controller without admission control: the config's). */
    private static int grantedWindow(SwitchMLConfig config, JoinResponse joined) {
        int granted = joined.getSlotsPerThread();
        if (granted == 0 || granted == config.slotsPerThread()) {
            return config.slotsPerThread();
        }
        LOG.warn("rank {}: job '{}' runs with {} slots per thread instead of {}: {}", config.rank(), config.job(),
                granted, config.slotsPerThread(), joined.getAdmission());
        return granted;
    }

    private void start() {
        PayloadSize size = config.payloadSize();
        FaultInjection faults = config.faultInjection();
        for (int t = 0; t < channels.size(); t++) {
            Channel channel = channels.get(t);
            channel.connect(switchEndpoints[t]).syncUninterruptibly();
            WorkerLane lane = new WorkerLane(t, slotsPerThread, size, jobNumber, config, statistics,
                    this::laneFailed, channel);
            if (faults.enabled()) {
                // Between the socket and the lane: sees every datagram the lane sends and receives.
                channel.pipeline().addLast(new FaultInjector(faults, config.rank(), t, statistics));
            }
            channel.pipeline().addLast(lane);
            lanes.add(lane);
        }
    }

    private static Channel bind(EventLoopGroup loops, SwitchMLConfig config, InetAddress localIp) {
        Bootstrap bootstrap = new Bootstrap()
                .group(loops)
                .channel(NettyTransport.datagramChannel())
                .option(ChannelOption.SO_RCVBUF, config.socketBufferBytes())
                .option(ChannelOption.SO_SNDBUF, config.socketBufferBytes())
                // Results are as large as the packets: the default 2 KiB would truncate them.
                .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(config.payloadSize().packetBytes()))
                .handler(new io.netty.channel.ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        // The lane handler is added once the job is joined.
                    }
                });
        try {
            return bootstrap.bind(new InetSocketAddress(localIp, 0)).sync().channel();
        } catch (Exception e) {
            throw new SwitchMLException("cannot bind a UDP socket on " + localIp.getHostAddress() + ": " + e.getMessage(), e);
        }
    }

    /** The local IPv4 address the kernel would use to reach {@code target}. */
    private static InetAddress routeTo(InetAddress target) {
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(target, 9); // connecting a UDP socket sends nothing; it only picks a route
            InetAddress local = probe.getLocalAddress();
            return local.isAnyLocalAddress() ? InetAddress.getLoopbackAddress() : local;
        } catch (IOException e) {
            throw new SwitchMLException("no route to " + target.getHostAddress() + ": " + e.getMessage(), e);
        }
    }

    private static InetAddress resolveIpv4(String host) {
        try {
            for (InetAddress a : InetAddress.getAllByName(host)) {
                if (a instanceof Inet4Address) {
                    return a;
                }
            }
        } catch (UnknownHostException e) {
            throw new SwitchMLException("cannot resolve host '" + host + "': " + e.getMessage(), e);
        }
        throw new SwitchMLException("host '" + host + "' has no IPv4 address; the switch speaks UDP over IPv4");
    }

    private static InetAddress switchAddress(String announced, InetAddress controllerIp) {
        if (announced.isEmpty()) {
            return controllerIp;
        }
        InetAddress address = resolveIpv4(announced);
        // A switch bound to the wildcard address is reached where the controller was.
        return address.isAnyLocalAddress() ? controllerIp : address;
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
    public int jobNumber() {
        return jobNumber;
    }

    /**
     * Slots each worker thread keeps in flight: the config's {@code slotsPerThread}, or fewer when the
     * switch's aggregator pool could not give the job its whole window (admission control).
     */
    public int slotsPerThread() {
        return slotsPerThread;
    }

    public SwitchMLConfig config() {
        return config;
    }

    public WorkerStatistics statistics() {
        return statistics;
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
                describe(sequence, "float32", in.remaining(), op)));
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
        if (lost != null) {
            operation.future.completeExceptionally(again(lost));
            return operation.future;
        }
        RuntimeException error = broken;
        if (error != null) {
            operation.future.completeExceptionally(new SwitchMLException(
                    "this context failed earlier and can no longer be used; close it and join again", error));
            return operation.future;
        }
        statistics.operations.increment();
        // Whole blocks per lane, so every lane but the last carries only full packets.
        int k = config.elementsPerPacket();
        int blocks = (operation.length + k - 1) / k;
        int lanesCount = lanes.size();
        for (int t = 0; t < lanesCount; t++) {
            int from = (int) Math.min(operation.length, (long) blocks * t / lanesCount * k);
            int to = (int) Math.min(operation.length, (long) blocks * (t + 1) / lanesCount * k);
            lanes.get(t).submit(new LaneTask(operation, from, to, k, slotsPerThread));
        }
        return operation.future.exceptionallyCompose(stallDiagnosis::explain);
    }

    /** Opens this rank's watch and waits until the controller has registered it. */
    private void watch() {
        cancelWatch = control.watch(jobNumber, jobId, rank(), new ControlPlaneClient.WatchListener() {
            @Override
            public void event(JobEvent event) {
                jobEvent(event);
            }

            @Override
            public void ended(Throwable error) {
                watchEnded(error);
            }
        });
        try {
            watching.get(config.joinTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof SwitchMLException failure ? again(failure)
                    : new SwitchMLException(e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new ControlPlaneException("joined job '" + config.job() + "' as rank " + rank() + ", but the controller at "
                    + control.address() + " did not confirm this rank's watch within " + config.joinTimeout().toMillis()
                    + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchMLException("interrupted while opening the watch of job '" + config.job() + "'", e);
        }
    }

    private void jobEvent(JobEvent event) {
        switch (event.getKind()) {
            case WATCHING -> watching.complete(null);
            case RANKS_FAILED -> jobFailed(new WorkerFailedException(event.getJobName(), event.getJobNumber(),
                    event.getFailedRanksList(), rank(), event.getReason()));
            default -> LOG.debug("rank {} ignores job event {}", rank(), event.getKind());
        }
    }

    /** The watch ended without this rank leaving: the controller (the switch process) is gone. */
    private void watchEnded(Throwable error) {
        if (closed) {
            return;
        }
        String why = error == null ? "the controller ended this rank's watch" : ControlPlaneClient.describe(error);
        jobFailed(new SwitchUnavailableException("job '" + config.job() + "' (job number " + jobNumber + "), rank " + rank()
                + ": lost the connection to the switch's controller at " + control.address() + " (" + why + "). The switch"
                + " process died, restarted or became unreachable, and the job's state on the switch is gone; this context"
                + " can no longer be used. To go on, close this context on every worker and, once the switch is back,"
                + " join again.", error));
    }

    /** The job is lost: fails everything pending now, and everything later. The first failure stands. */
    private void jobFailed(SwitchMLException error) {
        if (!jobFailure.complete(error)) {
            return;
        }
        watching.completeExceptionally(error);
        laneFailed(error);
    }

    /** A failure raised again for a later call, of the same type, with the first one as its cause. */
    private static SwitchMLException again(SwitchMLException first) {
        if (first instanceof WorkerFailedException w) {
            return new WorkerFailedException(w);
        }
        if (first instanceof SwitchUnavailableException u) {
            return new SwitchUnavailableException(u);
        }
        return new SwitchMLException(first.getMessage(), first);
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
            control.barrier(jobNumber, rank(), barrierSequence.getAndIncrement(), config.joinTimeout());
            return null;
        });
    }

    @Override
    public byte[] broadcast(byte[] value, int root) {
        if (root < 0 || root >= workers()) {
            throw new IllegalArgumentException("root " + root + " outside 0.." + (workers() - 1));
        }
        return controlCall(() -> control.broadcast(jobNumber, rank(), root, barrierSequence.getAndIncrement(), value,
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
            throw again(lost);
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
            SwitchMLException failure = again(lost);
            failure.addSuppressed(e);
            throw failure;
        }
    }

    /**
     * For tests: this worker dies as a killed process would, without leaving the job. Its connection
     * to the controller is cut (which ends its watch) and its sockets close.
     */
    void crashForTest() {
        closed = true;
        control.close();
        IllegalStateException crashed = new IllegalStateException("this worker crashed (test)");
        for (WorkerLane lane : lanes) {
            lane.abortAll(crashed);
        }
        channels.forEach(Channel::close);
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        completions.shutdown();
    }

    /**
     * For tests: sends {@code datagram} (position to limit) to the switch from worker thread
     * {@code thread}'s socket, the source the switch knows as this rank, past any fault injection.
     */
    void sendRawForTest(int thread, java.nio.ByteBuffer datagram) {
        channels.get(thread).pipeline().firstContext()
                .writeAndFlush(io.netty.buffer.Unpooled.copiedBuffer(datagram)).syncUninterruptibly();
    }

    /** Leaves the job and releases sockets and threads. Pending operations fail. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException closing = new IllegalStateException("the SwitchML context was closed");
        for (WorkerLane lane : lanes) {
            lane.abortAll(closing);
        }
        try {
            // The controller ends the watch when the rank leaves. After the switch went away there is
            // nothing to leave (and a restarted one may run another job under this number).
            if (!(jobFailure.getNow(null) instanceof SwitchUnavailableException)) {
                control.leave(jobNumber, jobId, rank());
            }
        } catch (SwitchMLException e) {
            LOG.debug("leaving job {} failed: {}", jobNumber, e.getMessage());
        } finally {
            Runnable cancel = cancelWatch;
            if (cancel != null) {
                cancel.run();
            }
            channels.forEach(Channel::close);
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            completions.shutdown();
            control.close();
        }
    }
}
