package io.switchml.controller;

import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.TlsServerCredentials;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.SwitchConfig;
import io.switchml.protocol.ProtocolConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A whole aggregation service in one process: the software switch (dataplane) and the controller
 * (gRPC) that sets jobs up in it. This is what {@code switchml switch} runs.
 */
public final class AggregationService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AggregationService.class);

    /**
     * The controller pings every worker connection this often (HTTP/2 keepalive), and closes it when
     * a ping is not answered within {@link #KEEPALIVE_TIMEOUT_SECONDS}; that ends the ranks' watches, so
     * a worker that vanishes without closing its TCP connection (host down, network cut) is declared
     * dead within about 10 s. A killed process is seen at once: its kernel closes the connection.
     */
    public static final int KEEPALIVE_TIME_SECONDS = 5;
    public static final int KEEPALIVE_TIMEOUT_SECONDS = 5;
    /** Workers may ping the controller this often (their own keepalive, see the client). */
    public static final int PERMIT_KEEPALIVE_SECONDS = 5;

    private final AggregationSwitch dataplane;
    private final JobRegistry registry;
    private final SwitchmlSessions sessions;
    private final Server server;
    private final ScheduledExecutorService timer;
    /** Runs the controller's calls: a fixed number of threads (see {@link ControllerSecurity#callThreads()}). */
    private final ExecutorService calls;
    private final List<String> exposureWarnings;
    /** The Unix-domain control socket's server, its socket and event loops; null without one. */
    private volatile LocalServer local;

    /** The controller's Unix-domain socket (see {@link ControlSocket}). */
    private record LocalServer(Server server, java.nio.file.Path socket,
                               io.grpc.netty.shaded.io.netty.channel.EventLoopGroup loops) {
        void close() {
            server.shutdownNow();
            try {
                server.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            try {
                java.nio.file.Files.deleteIfExists(socket);
            } catch (IOException e) {
                LOG.debug("cannot remove the control socket {}: {}", socket, e.toString());
            }
        }
    }

    /** The standard gRPC health service: SERVING from start to close. */
    private final HealthStatusManager health;

    private AggregationService(AggregationSwitch dataplane, JobRegistry registry, SwitchmlSessions sessions,
                               Server server, ScheduledExecutorService timer, ExecutorService calls,
                               List<String> exposureWarnings, HealthStatusManager health) {
        this.health = health;
        this.dataplane = dataplane;
        this.registry = registry;
        this.sessions = sessions;
        this.server = server;
        this.timer = timer;
        this.calls = calls;
        this.exposureWarnings = exposureWarnings;
    }

    /**
     * Starts the switch, then the controller on {@code controllerPort} (0 picks a free port) of
     * {@code controllerBind}, with the default security (plaintext, no tokens). Returns once both listen.
     */
    public static AggregationService start(SwitchConfig switchConfig, String controllerBind, int controllerPort) {
        return start(switchConfig, controllerBind, controllerPort, new ControllerSecurity());
    }

    /**
     * Starts the switch, then the controller with this security; warns (log and {@link #exposureWarnings()})
     * when the controller listens beyond loopback with part of its protection off.
     */
    public static AggregationService start(SwitchConfig switchConfig, String controllerBind, int controllerPort,
                                           ControllerSecurity security) {
        return start(switchConfig, controllerBind, controllerPort, security, null);
    }

    /**
     * As {@link #start(SwitchConfig, String, int, ControllerSecurity)}; with {@code leaf} not null the
     * switch is a leaf of a two-level hierarchy (docs/ARCHITECTURE.md section 9): it serves its share of
     * every job's ranks and joins the spine's controller for the rest.
     */
    public static AggregationService start(SwitchConfig switchConfig, String controllerBind, int controllerPort,
                                           ControllerSecurity security, LeafRole leaf) {
        security.validate();
        io.switchml.control.NettyLogFilter.install(); // before gRPC's first server: no line per control-socket connection
        AggregationSwitch dataplane = AggregationSwitch.start(switchConfig);
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "switchml-controller-timer");
            t.setDaemon(true);
            return t;
        });
        // A fixed pool: a flood of calls queues instead of growing the controller's threads (gRPC's default grows).
        ExecutorService calls = Executors.newFixedThreadPool(security.callThreads(), r -> {
            Thread t = new Thread(r, "switchml-controller-call");
            t.setDaemon(true);
            return t;
        });
        try {
            String bind = dataplane.bindAddress().getHostAddress();
            String announced = dataplane.bindAddress().isAnyLocalAddress() ? "" : bind;
            JobLog jobLog = JobLog.flushedBy(timer);
            JobRegistry registry = new JobRegistry(dataplane, timer, security, leaf, jobLog);
            SwitchmlSessions sessions = new SwitchmlSessions(dataplane, jobLog, security.tenantShare());
            PeerRateLimiter joinLimiter = new PeerRateLimiter(security.joinsPerSecondPerPeer(), security.joinBurstPerPeer(),
                    System::nanoTime);
            MalformedRequests malformed = MalformedRequests.loggingOncePerMinute(timer);
            TransportErrorLog.install(timer); // oversized headers and messages: counted, no stack trace per call
            // The last interceptor runs first: protected mode before anything else.
            AddressGate networkAccess = AddressGate.protectedMode(security);
            ServerServiceDefinition controller = malformed.guard(ServerInterceptors.intercept(
                    new ControllerService(registry, sessions, dataplane, announced, joinLimiter),
                    new ControllerAuthenticator(security.operatorTokenDigest(), security.localOperators()), networkAccess));
            AddressGate sessionAccess = AddressGate.switchmlSessions(security.switchmlSessions());
            List<ServerServiceDefinition> switchml = SwitchmlServices.create(dataplane, sessions, timer,
                    SwitchmlServices.WAIT_MS).stream()
                    .map(d -> malformed.guard(ServerInterceptors.intercept(d, sessionAccess, networkAccess))).toList();
            // Open to every caller, as load balancers and orchestrators probe it without credentials; so its garbage
            // goes through the same limiter as the others', and its Watch streams are capped.
            HealthStatusManager health = new HealthStatusManager();
            ServerServiceDefinition healthService = malformed.guard(ServerInterceptors.intercept(health.getHealthService(),
                    new WatchStreamLimit(security.maxHealthWatches())));
            Server server = NettyServerBuilder.forAddress(new InetSocketAddress(controllerBind, controllerPort),
                            credentials(security))
                    .executor(calls)
                    .addTransportFilter(new LocalUserFilter())
                    .keepAliveTime(KEEPALIVE_TIME_SECONDS, TimeUnit.SECONDS)
                    .keepAliveTimeout(KEEPALIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .permitKeepAliveTime(PERMIT_KEEPALIVE_SECONDS, TimeUnit.SECONDS)
                    .permitKeepAliveWithoutCalls(true)
                    .addService(controller)
                    .addServices(switchml)
                    .addService(healthService)
                    .build()
                    .start();
            int listening = ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
            registry.controllerPort(listening);
            // Plaintext switches also listen on a Unix-domain socket, where the kernel names each caller's user
            // (a switch with TLS keeps its certificates' rules: local callers reach it over TCP).
            java.nio.file.Path socket = security.tlsEnabled() ? null : ControlSocket.prepare(listening);
            LocalServer localServer = null;
            if (socket != null) {
                io.grpc.netty.shaded.io.netty.channel.EventLoopGroup loops =
                        new io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup(1, r -> {
                            Thread t = new Thread(r, "switchml-controller-socket");
                            t.setDaemon(true);
                            return t;
                        });
                try {
                    Server onSocket = NettyServerBuilder.forAddress(
                                    new io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress(socket.toString()),
                                    ControlSocket.credentials())
                            .channelType(io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel.class)
                            .bossEventLoopGroup(loops).workerEventLoopGroup(loops)
                            .executor(calls)
                            .keepAliveTime(KEEPALIVE_TIME_SECONDS, TimeUnit.SECONDS)
                            .keepAliveTimeout(KEEPALIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                            .permitKeepAliveTime(PERMIT_KEEPALIVE_SECONDS, TimeUnit.SECONDS)
                            .permitKeepAliveWithoutCalls(true)
                            .addTransportFilter(new LocalUserFilter())
                            .addService(controller)
                            .addServices(switchml)
                            .addService(healthService)
                            .build()
                            .start();
                    // Every local user may connect; who it is, the kernel says.
                    java.nio.file.Files.setPosixFilePermissions(socket,
                            java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
                    localServer = new LocalServer(onSocket, socket, loops);
                } catch (IOException | RuntimeException e) {
                    loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
                    LOG.warn("no Unix-domain control socket at {}: {}; local callers use TCP", socket, e.toString());
                }
            }
            health.setStatus(ControllerGrpc.SERVICE_NAME, HealthCheckResponse.ServingStatus.SERVING);
            long idleNanos = TimeUnit.MILLISECONDS.toNanos(security.jobIdleTimeoutMs());
            long checkEvery = Math.max(100, security.jobIdleTimeoutMs() / 4);
            timer.scheduleWithFixedDelay(() -> {
                try {
                    long now = System.nanoTime();
                    registry.reclaimIdle(now, idleNanos);
                    sessions.reclaimIdle(now, idleNanos);
                } catch (RuntimeException e) {
                    LOG.error("the idle-job check failed; it runs again in {} ms", checkEvery, e); // a throw would stop it
                }
            }, checkEvery, checkEvery, TimeUnit.MILLISECONDS);
            LOG.debug("controller listening on {} ({})", server.getListenSockets(), security);
            List<String> warnings = ExposureWarnings.of(controllerBind, security);
            warnings.forEach(w -> LOG.warn("security: {}", w));
            AggregationService service = new AggregationService(dataplane, registry, sessions, server, timer, calls,
                    warnings, health);
            service.local = localServer;
            return service;
        } catch (IOException | RuntimeException e) {
            dataplane.close();
            timer.shutdownNow();
            calls.shutdownNow();
            throw new IllegalStateException("cannot start the controller on " + controllerBind + ":" + controllerPort
                    + ": " + rootMessage(e) + (controllerPort == ProtocolConstants.CONTROLLER_TCP_PORT
                    ? " (is another switch running? pick another port with --controller-port)" : ""), e);
        }
    }

    /** TLS (mutual when a client CA is set) or plaintext. */
    private static ServerCredentials credentials(ControllerSecurity security) throws IOException {
        if (!security.tlsEnabled()) {
            return InsecureServerCredentials.create();
        }
        TlsServerCredentials.Builder tls = TlsServerCredentials.newBuilder()
                .keyManager(security.tlsCertificate().toFile(), security.tlsKey().toFile());
        if (security.tlsClientCa() != null) {
            tls.trustManager(security.tlsClientCa().toFile()).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
        }
        return tls.build();
    }

    /** What was wrong with the protection of a controller reachable beyond loopback; empty when nothing. */
    public List<String> exposureWarnings() {
        return exposureWarnings;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage();
    }

    public AggregationSwitch dataplane() {
        return dataplane;
    }

    /** The controller's jobs; for the metrics endpoint. */
    JobRegistry registry() {
        return registry;
    }

    /** SwitchML's sessions on this switch; for the metrics endpoint and tests. */
    SwitchmlSessions sessions() {
        return sessions;
    }

    /** Ranks waiting for their jobs to form: bounded by {@link ControllerSecurity#maxPendingJoins}. */
    /** Lines about jobs that callers caused beyond their share of the log, counted instead of written. */
    public long logLinesNotWritten() {
        return registry.logLinesNotWritten();
    }

    /** Calls for jobs their caller is no member of (wrong or missing job ids), since the start. */
    public long foreignJobCalls() {
        return registry.foreignJobCalls();
    }

    public int pendingJoins() {
        return registry.pendingJoins();
    }

    /** The TCP port the controller listens on. */
    public int controllerPort() {
        return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    }

    /** The controller's Unix-domain socket, where it has one (see {@link ControlSocket}). */
    public java.util.Optional<java.nio.file.Path> controlSocket() {
        LocalServer onSocket = local;
        return onSocket == null ? java.util.Optional.empty() : java.util.Optional.of(onSocket.socket());
    }

    /** Blocks until the service is shut down (for the command line). */
    public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    @Override
    public void close() {
        health.enterTerminalState();
        registry.close();
        LocalServer onSocket = local;
        if (onSocket != null) {
            onSocket.close();
        }
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        timer.shutdownNow();
        calls.shutdownNow();
        dataplane.close();
    }
}
