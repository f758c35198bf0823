package io.switchml.dataplane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.epoll.SegmentedDatagramPacket;
import io.netty.channel.socket.DatagramPacket;
import io.switchml.ipc.IpcPoller;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends results out of the switch port that received the packet, so that replies swap the
 * request's source and destination ports. The result was written in place over the received
 * datagram's buffer; every recipient gets a retained duplicate of that one buffer (no copy), and
 * the port writes them together after each batch it read: with segmentation, a recipient's results
 * of the batch as runs ({@link ResultRuns}), each one segmented datagram (docs/ARCHITECTURE.md section 17).
 */
final class ChannelResultSink implements ResultSink {
    private static final Logger LOG = LoggerFactory.getLogger(ChannelResultSink.class);
    private static final byte[] WAKE_UP = new byte[IpcPoller.DOORBELL_BYTES];
    private final SwitchCounters counters;
    private final ResultRuns runs = new ResultRuns(this::write);
    private final ChannelFutureListener segmentedSent = this::segmentedSent;
    private ChannelHandlerContext context;
    private ByteBuf received;
    private boolean pendingFlush;
    /** Whether results go as runs; false from the start without GSO, and after the kernel refused a run. */
    private boolean segmenting;

    /** @param segmenting whether a recipient's results of one batch go as one segmented datagram (UDP GSO) */
    ChannelResultSink(SwitchCounters counters, boolean segmenting) {
        this.counters = counters;
        this.segmenting = segmenting;
    }

    /** Whether results go as runs now. */
    boolean segmenting() {
        return segmenting;
    }

    /**
     * Binds the sink to the datagram being processed; {@code received} holds the result bytes, or is
     * null for a packet from the shared-memory port, whose memory is reused once it is processed.
     */
    void begin(ChannelHandlerContext context, ByteBuf received) {
        this.context = context;
        this.received = received;
    }

    /** Unbinds the datagram; what it produced waits for {@link #flush()}. */
    void end() {
        received = null;
    }

    /**
     * Sends what the packets since the last flush produced: once per batch of received datagrams or
     * drained ring records, so that one sendmmsg carries the results of every slot the batch completed.
     */
    void flush() {
        if (!runs.isEmpty()) {
            runs.writeAll();
        }
        if (pendingFlush) {
            pendingFlush = false;
            context.flush();
        }
    }

    /** {@code packet} views the same memory as the received buffer, which is what is sent. */
    @Override
    public boolean send(InetSocketAddress recipient, ByteBuffer packet) {
        if (!context.channel().isWritable()) {
            // The kernel has pushed back for long enough to fill the queue: drop rather than grow it.
            return false;
        }
        ByteBuf content = received != null ? received.retainedDuplicate() : Unpooled.copiedBuffer(packet.duplicate());
        if (segmenting) {
            runs.add(recipient, content, context.alloc());
        } else {
            write(recipient, content, content.readableBytes(), 1);
        }
        return true;
    }

    private void write(InetSocketAddress recipient, ByteBuf content, int segmentBytes, int segments) {
        if (segments == 1) {
            context.write(new DatagramPacket(content, recipient), context.voidPromise());
        } else {
            context.write(new SegmentedDatagramPacket(content, segmentBytes, recipient)).addListener(segmentedSent);
            counters.increment(SwitchCounter.SEGMENTED_DATAGRAMS_SENT);
        }
        counters.increment(SwitchCounter.DATAGRAMS_SENT);
        pendingFlush = true;
    }

    /**
     * A run the kernel refused (EIO where the path's device cannot checksum it, EINVAL where it exceeds what the path
     * takes): its results count as lost, which the workers' retransmissions make up for (the switch answers them
     * from the stored results), and this port sends one datagram per result from now on.
     */
    private void segmentedSent(ChannelFuture sent) {
        if (sent.isSuccess()) {
            return;
        }
        counters.increment(SwitchCounter.IO_ERRORS);
        if (segmenting) {
            segmenting = false;
            counters.increment(SwitchCounter.UDP_SEGMENTATION_OFF);
            LOG.warn("switch port {}: the kernel refused a segmented UDP datagram of results ({}); sending one datagram"
                    + " per result from now on (--udp-segmentation off avoids the attempt)",
                    sent.channel().localAddress(), sent.cause().toString());
        }
    }

    @Override
    public void wakeUp(InetSocketAddress recipient) {
        context.write(new DatagramPacket(Unpooled.wrappedBuffer(WAKE_UP), recipient), context.voidPromise());
        counters.increment(SwitchCounter.DATAGRAMS_SENT);
        pendingFlush = true;
    }
}
