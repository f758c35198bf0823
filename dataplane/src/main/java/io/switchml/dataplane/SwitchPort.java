package io.switchml.dataplane;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.switchml.udp.Offload;
import io.switchml.udp.UdpOffloads;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One UDP port of the switch: a datagram channel on its own event loop thread, which is the single
 * thread of the port's {@link SwitchProgram}, with that thread's counters.
 */
final class SwitchPort implements AutoCloseable {
    /** Receive buffers take any UDP datagram; Netty's default of 2048 bytes would silently truncate. */
    private static final Logger LOG = LoggerFactory.getLogger(SwitchPort.class);
    /** How long closing waits for the socket, twice at most (see {@link #close}). */
    private static final long CLOSE_WAIT_MILLIS = 5_000;
    private static final int MAX_DATAGRAM_BYTES = 65536;
    /** Datagrams one receive may take at once (recvmmsg on epoll). */
    private static final int DATAGRAMS_PER_READ = 8;
    /** Socket buffers of a few MiB absorb bursts of large packets from many workers. */
    private static final int SOCKET_BUFFER_BYTES = 4 << 20;
    /**
     * Bytes queued in Netty above which the port stops queueing results. Sends wait there only
     * while the kernel pushes back; a multicast of 256 results of 60 KiB fits below it.
     */
    private static final WriteBufferWaterMark SEND_QUEUE_LIMITS = new WriteBufferWaterMark(32 << 20, 64 << 20);

    private final IoEventLoopGroup eventLoop;
    private final Channel channel;
    private final SwitchCounters counters;
    private final JobActivity activity;
    /** Kept from the bind, so that it can still be read once the channel is closed. */
    private final int port;

    /** The port's shared-memory side; null without one. */
    private final IpcPort ipcPort;

    /** Whether the port started sending results as runs (UDP GSO) and receiving with UDP GRO. */
    private final boolean segmenting;
    private final boolean coalescing;

    private SwitchPort(IoEventLoopGroup eventLoop, Channel channel, SwitchCounters counters, JobActivity activity,
                       IpcPort ipcPort, boolean segmenting, boolean coalescing) {
        this.ipcPort = ipcPort;
        this.segmenting = segmenting;
        this.coalescing = coalescing;
        this.eventLoop = eventLoop;
        this.channel = channel;
        this.counters = counters;
        this.activity = activity;
        this.port = ((InetSocketAddress) channel.localAddress()).getPort();
    }

    /**
     * Binds {@code address:port} (port 0: an ephemeral port) and starts receiving. The socket is
     * IPv4-only, as the worker table is. With {@code ipc} (not null) the port also reads the installed
     * jobs' request rings of its index there, on the same thread.
     *
     * @throws UncheckedIOException when the port cannot be bound, for instance because it is taken
     */
    static SwitchPort bind(UdpTransport transport, Inet4Address address, int port, int portIndex, int portCount,
                           ControlPlane controlPlane, DropProbabilities dropProbabilities, long dropSeed,
                           IpcDirectory ipc, long ipcSpinNanos, Offload segmentation, Offload gro) {
        SwitchCounters counters = new SwitchCounters();
        ChannelResultSink sink = new ChannelResultSink(counters,
                segmentation.use("udpSegmentation", transport.segmentation(), transport.segmentationMissing()));
        SwitchProgram program = new SwitchProgram(controlPlane, portCount,
                new DropSimulator(dropProbabilities, dropSeed), counters, sink);
        SwitchPortHandler handler = new SwitchPortHandler(portIndex, program, sink, counters);

        // The shared-memory side, once started: it takes the late faults of its files wherever they land.
        AtomicReference<IpcPort> ipcSide = new AtomicReference<>();
        IoEventLoopGroup eventLoop = new MultiThreadIoEventLoopGroup(1,
                new DefaultThreadFactory("switchml-switch-port-" + portIndex), LateFaultGuard.guard(transport.ioHandlerFactory(),
                        late -> ipcSide.get() != null && ipcSide.get().lateFault(late)));
        // The receive side is set up as the channel is made, so that the allocator matches what the kernel granted.
        AtomicBoolean coalescing = new AtomicBoolean();
        Bootstrap bootstrap = new Bootstrap()
                .group(eventLoop)
                .channelFactory(() -> {
                    DatagramChannel channel = transport.newChannel(SocketProtocolFamily.INET);
                    coalescing.set(UdpOffloads.prepareReceive(channel, MAX_DATAGRAM_BYTES, DATAGRAMS_PER_READ, gro));
                    handler.coalescing(coalescing.get());
                    return channel;
                })
                .option(ChannelOption.SO_RCVBUF, SOCKET_BUFFER_BYTES)
                .option(ChannelOption.SO_SNDBUF, SOCKET_BUFFER_BYTES)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, SEND_QUEUE_LIMITS)
                .handler(handler);
        ChannelFuture bound = bootstrap.bind(address, port).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            shutDown(eventLoop);
            Throwable cause = bound.cause();
            if (cause instanceof IllegalStateException required) {
                throw required; // udpGro=on where the kernel refused GRO: the message says so
            }
            String message = "cannot bind switch UDP port " + (port == 0 ? "(ephemeral)" : port) + " on "
                    + address.getHostAddress() + ": " + cause.getMessage();
            throw new UncheckedIOException(message, cause instanceof IOException io ? io : new IOException(cause));
        }
        if (!coalescing.get() && gro == Offload.AUTO && transport == UdpTransport.EPOLL) {
            counters.increment(SwitchCounter.UDP_GRO_OFF);
        }
        IpcPort ipcPort = null;
        if (ipc != null) {
            ipcPort = new IpcPort(portIndex, controlPlane, program, sink, bound.channel().pipeline().context(handler),
                    ipcSpinNanos);
            IpcPort started = ipcPort;
            ipcSide.set(started);
            eventLoop.submit(() -> handler.ipcPort(started)).awaitUninterruptibly();
            ipcPort.start();
        }
        return new SwitchPort(eventLoop, bound.channel(), counters, program.activity(), ipcPort,
                sink.segmenting(), coalescing.get());
    }

    /** The offloads the port started with, for the switch's start line: "GSO runs, GRO" or "none". */
    String offloads() {
        return segmenting && coalescing ? "GSO runs, GRO" : segmenting ? "GSO runs" : coalescing ? "GRO" : "none";
    }

    /** The bound UDP port. */
    int port() {
        return port;
    }

    SwitchCounters counters() {
        return counters;
    }

    JobActivity activity() {
        return activity;
    }

    /** Closes the socket and stops the thread; returns when both are done. */
    @Override
    public void close() {
        if (ipcPort != null) {
            ipcPort.close();
        }
        // A late fault on the shared-memory port's mapped files (a file shrank under it) is raised on whatever task the
        // port's thread runs next, which can be this close: it then never completes, so it is asked again.
        if (!channel.close().awaitUninterruptibly(CLOSE_WAIT_MILLIS) && !channel.close().awaitUninterruptibly(CLOSE_WAIT_MILLIS)) {
            LOG.warn("switch port {}: its socket did not close within {} ms; stopping its thread anyway", port,
                    2 * CLOSE_WAIT_MILLIS);
        }
        shutDown(eventLoop);
    }

    private static void shutDown(IoEventLoopGroup eventLoop) {
        eventLoop.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
