package io.switchml.udp;

import io.netty.channel.ChannelException;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.SegmentedDatagramPacket;
import io.netty.channel.socket.DatagramChannel;

/**
 * What the host allows of the UDP offloads (docs/ARCHITECTURE.md section 17), and a channel's receive side with or
 * without GRO.
 *
 * <p>With GRO the kernel hands a socket a run of one sender's equal-size datagrams (a segmented send, or datagrams
 * coalesced on the way in) as one datagram and says its segment size. Netty's epoll channel reads such a datagram
 * with recvmsg and passes the pipeline one {@code DatagramPacket} per packet, cut at that size (each a slice of the
 * one receive buffer, no copy), so the handlers see the packets they saw before. Netty learns the segment size
 * only from recvmsg (its recvmmsg takes no control messages), so a GRO channel reads one coalesced datagram per
 * system call into a buffer that takes any; without GRO, one recvmmsg takes a batch of single datagrams.
 */
public final class UdpOffloads {
    /** The largest UDP payload of one IPv4 datagram: what a segmented datagram may carry in all. */
    public static final int MAX_DATAGRAM_BYTES = 65_507;
    /** Segments one segmented datagram may carry (UDP_MAX_SEGMENTS of older kernels). */
    public static final int MAX_SEGMENTS = 64;
    /** A receive buffer that takes any coalesced datagram whole (the kernel coalesces up to 64 KiB). */
    static final int COALESCED_BUFFER_BYTES = 65_536;
    /**
     * With GRO, the packets one turn of the event loop reads at most: Netty counts every packet of a coalesced
     * datagram, so its default of 16 would end the turn after one datagram of runs.
     */
    static final int PACKETS_PER_TURN = 256;

    private UdpOffloads() {
    }

    /** Whether this host's channels can send segmented datagrams (UDP GSO: the epoll transport on Linux 4.18+). */
    public static boolean segmentationAvailable() {
        return Epoll.isAvailable() && SegmentedDatagramPacket.isSupported();
    }

    /** Why {@link #segmentationAvailable()} is false, for errors and logs. */
    public static String segmentationMissing() {
        return Epoll.isAvailable() ? "this kernel cannot send segmented UDP datagrams (UDP_SEGMENT: Linux 4.18+)"
                : epollMissing();
    }

    private static String epollMissing() {
        Throwable cause = Epoll.unavailabilityCause();
        return "Netty's epoll transport does not load here" + (cause == null ? "" : " (" + cause + ")");
    }

    /**
     * Prepares the receive side of a new channel, before it is registered (a bootstrap must not set
     * {@code RCVBUF_ALLOCATOR} or {@code MAX_DATAGRAM_PAYLOAD_SIZE} after this). With GRO granted, one coalesced
     * datagram per read; else, on epoll, up to {@code packetsPerRead} datagrams of at most {@code maxPacketBytes} per
     * recvmmsg; on NIO one datagram per read.
     *
     * @param gro the {@code udpGro} setting
     * @return whether the channel receives with GRO
     * @throws IllegalStateException where {@code gro} is {@link Offload#ON} and the kernel or transport refuses it
     */
    public static boolean prepareReceive(DatagramChannel channel, int maxPacketBytes, int packetsPerRead, Offload gro) {
        if (!(channel instanceof EpollDatagramChannel epoll)) {
            gro.use("udpGro", false, epollMissing());
            channel.config().setRecvByteBufAllocator(new FixedRecvByteBufAllocator(maxPacketBytes));
            return false;
        }
        boolean coalesce = gro != Offload.OFF
                && gro.use("udpGro", enableGro(epoll), "the kernel refused UDP_GRO on the socket (Linux 5.0+)");
        if (coalesce) {
            epoll.config().setMaxDatagramPayloadSize(COALESCED_BUFFER_BYTES);
            epoll.config().setRecvByteBufAllocator(
                    new FixedRecvByteBufAllocator(COALESCED_BUFFER_BYTES).maxMessagesPerRead(PACKETS_PER_TURN));
        } else {
            // recvmmsg: one system call fills a buffer of several datagrams, each handed on as a slice.
            epoll.config().setMaxDatagramPayloadSize(maxPacketBytes);
            epoll.config().setRecvByteBufAllocator(new FixedRecvByteBufAllocator(maxPacketBytes * Math.max(1, packetsPerRead)));
        }
        return coalesce;
    }

    private static boolean enableGro(EpollDatagramChannel channel) {
        try {
            channel.config().setOption(EpollChannelOption.UDP_GRO, true);
        } catch (ChannelException refused) {
            return false;
        }
        return channel.config().isUdpGro();
    }
}
