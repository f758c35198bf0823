package io.switchml.client;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/** Netty's native epoll transport where it loads, NIO elsewhere. */
final class NettyTransport {
    private NettyTransport() {
    }

    static boolean epoll() {
        return Epoll.isAvailable();
    }

    static EventLoopGroup eventLoops(int threads, String name) {
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true),
                epoll() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }

    static Class<? extends DatagramChannel> datagramChannel() {
        return epoll() ? EpollDatagramChannel.class : NioDatagramChannel.class;
    }
}
