package io.switchml.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ChannelFuture;
import io.switchml.api.SwitchMLException;
import io.switchml.protocol.PacketMac;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A worker's UDP sockets for one switch: one per worker thread, each on its own event loop, bound
 * before the job is joined (the controller learns their ports) and connected to the switch's ports
 * once it is. See docs/ARCHITECTURE.md, section 5.
 */
final class WorkerSockets implements AutoCloseable {
    private final EventLoopGroup loops;
    private final List<Channel> channels;
    private final InetAddress localAddress;
    /** Per worker thread: whether its socket receives with UDP GRO. */
    private final List<AtomicBoolean> coalescing = new ArrayList<>();

    private WorkerSockets(EventLoopGroup loops, List<Channel> channels, InetAddress localAddress) {
        this.loops = loops;
        this.channels = channels;
        this.localAddress = localAddress;
    }

    /** Binds {@code config.threads()} sockets on {@code localAddress}, any free ports. */
    static WorkerSockets bind(SwitchMLConfig config, InetAddress localAddress) {
        EventLoopGroup loops = NettyTransport.eventLoops(config.threads(), "switchml-worker-rank" + config.rank());
        List<Channel> channels = new ArrayList<>();
        WorkerSockets sockets = new WorkerSockets(loops, channels, localAddress);
        try {
            for (int t = 0; t < config.threads(); t++) {
                AtomicBoolean gro = new AtomicBoolean();
                channels.add(bindOne(loops, config, localAddress, gro));
                sockets.coalescing.add(gro);
            }
            return sockets;
        } catch (RuntimeException e) {
            sockets.close();
            throw e;
        }
    }

    private static Channel bindOne(EventLoopGroup loops, SwitchMLConfig config, InetAddress localIp,
                                   AtomicBoolean coalescing) {
        // Results are as large as the packets: the receive side takes them whole (Netty's default 2 KiB would
        // truncate), several per read (NettyTransport.newChannel).
        Bootstrap bootstrap = new Bootstrap()
                .group(loops)
                .channelFactory(() -> NettyTransport.newChannel(config.payloadSize().packetBytes()
                        + (config.authenticatePackets() ? PacketMac.TAG_BYTES : 0), config.udpGro(), coalescing))
                .option(ChannelOption.SO_RCVBUF, config.socketBufferBytes())
                .option(ChannelOption.SO_SNDBUF, config.socketBufferBytes())
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        // The lane handler is added once the job is joined.
                    }
                });
        ChannelFuture bound = bootstrap.bind(new InetSocketAddress(localIp, 0)).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            Throwable cause = bound.cause();
            if (cause instanceof IllegalStateException required) {
                throw new SwitchMLException(required.getMessage(), required); // udpGro=on where the kernel refused it
            }
            throw new SwitchMLException("cannot bind a UDP socket on " + localIp.getHostAddress() + ": "
                    + cause.getMessage(), cause);
        }
        return bound.channel();
    }

    /** Whether worker thread {@code thread}'s socket receives with UDP GRO. */
    boolean coalescing(int thread) {
        return coalescing.get(thread).get();
    }

    /** Where the switch is: the address the controller announced, or the controller's own when it announced none. */
    static InetAddress switchAddress(String announced, InetAddress controllerIp) {
        if (announced.isEmpty()) {
            return controllerIp;
        }
        InetAddress address = Routes.resolveIpv4(announced);
        // A switch bound to the wildcard address is reached where the controller was.
        return address.isAnyLocalAddress() ? controllerIp : address;
    }

    /** The bound ports, by worker thread. */
    List<Integer> ports() {
        List<Integer> ports = new ArrayList<>();
        for (Channel channel : channels) {
            ports.add(((InetSocketAddress) channel.localAddress()).getPort());
        }
        return ports;
    }

    int count() {
        return channels.size();
    }

    Channel channel(int thread) {
        return channels.get(thread);
    }

    /** The IPv4 address the sockets are bound to (the one that routes to this switch). */
    InetAddress localAddress() {
        return localAddress;
    }

    @Override
    public void close() {
        channels.forEach(Channel::close);
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
