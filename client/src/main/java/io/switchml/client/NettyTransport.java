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
import io.switchml.udp.Offload;
import io.switchml.udp.UdpOffloads;
import java.util.concurrent.atomic.AtomicBoolean;

/** Netty's native epoll transport where it loads, NIO elsewhere. */
final class NettyTransport {
    private NettyTransport() {
    }

    static boolean epoll() {
        return Epoll.isAvailable();
    }

    /** Whether this host's channels can send a segmented datagram (UDP GSO: epoll on Linux 4.18+). */
    static boolean segmentation() {
        return UdpOffloads.segmentationAvailable();
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
     * A new channel for results of up to {@code datagramBytes}, its receive side ready: with UDP GRO (where
     * {@code gro} and the kernel allow), a run of results in one read, handed on one result at a time; else, on
     * epoll, one system call (recvmmsg) takes up to a window's worth of results, each a slice of one buffer; on NIO
     * one per read.
     *
     * @param coalescing set to whether the channel receives with GRO
     */
    static DatagramChannel newChannel(int datagramBytes, Offload gro, AtomicBoolean coalescing) {
        DatagramChannel channel = epoll() ? new EpollDatagramChannel() : new NioDatagramChannel();
        int datagrams = Math.max(1, Math.min(BATCH_DATAGRAMS, BATCH_BYTES / datagramBytes));
        coalescing.set(UdpOffloads.prepareReceive(channel, datagramBytes, datagrams, gro));
        return channel;
    }
}
