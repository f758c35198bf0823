package io.switchml.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.switchml.api.SwitchMLException;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A worker's UDP sockets for one switch: one per worker thread, each on its own event loop, bound
 * before the job is joined (the controller learns their ports) and connected to the switch's ports
 * once it is. See docs/ARCHITECTURE.md, section 5.
 */
final class WorkerSockets implements AutoCloseable {
    private final EventLoopGroup loops;
    private final List<Channel> channels;
    private final InetAddress localAddress;

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
                channels.add(bindOne(loops, config, localAddress));
            }
            return sockets;
        } catch (RuntimeException e) {
            sockets.close();
            throw e;
        }
    }

    private static Channel bindOne(EventLoopGroup loops, SwitchMLConfig config, InetAddress localIp) {
        Bootstrap bootstrap = new Bootstrap()
                .group(loops)
                .channel(NettyTransport.datagramChannel())
                .option(ChannelOption.SO_RCVBUF, config.socketBufferBytes())
                .option(ChannelOption.SO_SNDBUF, config.socketBufferBytes())
                // Results are as large as the packets: the default 2 KiB would truncate them.
                .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(config.payloadSize().packetBytes()))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        // The lane handler is added once the job is joined.
                    }
                });
        NettyTransport.receiveInBatches(bootstrap, config.payloadSize().packetBytes());
        try {
            return bootstrap.bind(new InetSocketAddress(localIp, 0)).sync().channel();
        } catch (Exception e) {
            throw new SwitchMLException("cannot bind a UDP socket on " + localIp.getHostAddress() + ": " + e.getMessage(), e);
        }
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
