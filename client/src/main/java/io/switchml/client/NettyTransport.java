package io.switchml.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.SegmentedDatagramPacket;
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

    /** Whether this host's channels can send a segmented datagram (UDP GSO: epoll on Linux 4.18+). */
    static boolean segmentation() {
        return epoll() && SegmentedDatagramPacket.isSupported();
    }

    static EventLoopGroup eventLoops(int threads, String name) {
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true),
                epoll() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }

    /** Payload bytes one batched receive takes at most: about one window of results (SwitchMLConfig's auto window). */
    static final int BATCH_BYTES = 512 << 10;
    /** Datagrams one batched receive takes at most. */
    static final int BATCH_DATAGRAMS = 64;

    /**
     * On epoll, one system call (recvmmsg) takes up to a window's worth of results at once, each handed on as a
     * slice of one buffer, instead of one recvmsg per datagram; elsewhere nothing changes.
     */
    static void receiveInBatches(Bootstrap bootstrap, int datagramBytes) {
        if (!epoll()) {
            return;
        }
        int datagrams = Math.max(1, Math.min(BATCH_DATAGRAMS, BATCH_BYTES / datagramBytes));
        bootstrap.option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, datagramBytes)
                .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(datagramBytes * datagrams));
    }

    static Class<? extends DatagramChannel> datagramChannel() {
        return epoll() ? EpollDatagramChannel.class : NioDatagramChannel.class;
    }
}
