package io.switchml.dataplane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.DatagramPacket;
import io.switchml.ipc.IpcPoller;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Sends results out of the switch port that received the packet, so that replies swap the
 * request's source and destination ports. The result was written in place over the received
 * datagram's buffer; every recipient gets a retained duplicate of that one buffer (no copy), and
 * the port flushes them together after each batch it read.
 */
final class ChannelResultSink implements ResultSink {
    private static final byte[] WAKE_UP = new byte[IpcPoller.DOORBELL_BYTES];
    private ChannelHandlerContext context;
    private ByteBuf received;
    private boolean pendingFlush;

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
        context.write(new DatagramPacket(content, recipient), context.voidPromise());
        pendingFlush = true;
        return true;
    }

    @Override
    public void wakeUp(InetSocketAddress recipient) {
        context.write(new DatagramPacket(Unpooled.wrappedBuffer(WAKE_UP), recipient), context.voidPromise());
        pendingFlush = true;
    }
}
