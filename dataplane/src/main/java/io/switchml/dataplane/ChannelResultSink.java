package io.switchml.dataplane;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Sends results out of the switch port that received the packet, so that replies swap the
 * request's source and destination ports. The result was written in place over the received
 * datagram's buffer; every recipient gets a retained duplicate of that one buffer (no copy), and
 * the port handler flushes them together after the packet.
 */
final class ChannelResultSink implements ResultSink {
    private ChannelHandlerContext context;
    private ByteBuf received;
    private boolean pendingFlush;

    /** Binds the sink to the datagram being processed; {@code received} holds the result bytes. */
    void begin(ChannelHandlerContext context, ByteBuf received) {
        this.context = context;
        this.received = received;
    }

    /** Flushes what the packet produced and unbinds the datagram. */
    void end() {
        if (pendingFlush) {
            pendingFlush = false;
            context.flush();
        }
        received = null;
    }

    /** {@code packet} views the same memory as the received buffer, which is what is sent. */
    @Override
    public boolean send(InetSocketAddress recipient, ByteBuffer packet) {
        if (!context.channel().isWritable()) {
            // The kernel has pushed back for long enough to fill the queue: drop rather than grow it.
            return false;
        }
        context.write(new DatagramPacket(received.retainedDuplicate(), recipient), context.voidPromise());
        pendingFlush = true;
        return true;
    }
}
