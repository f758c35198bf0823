package io.switchml.dataplane;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import io.switchml.ipc.IpcPoller;
import io.switchml.udp.DatagramBoundaries;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds the datagrams of one switch port to that port's {@link SwitchProgram}, on the port's event
 * loop thread, which is the program's single thread.
 */
final class SwitchPortHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(SwitchPortHandler.class);

    private final int portIndex;
    private final SwitchProgram program;
    private final ChannelResultSink sink;
    private final SwitchCounters counters;
    private boolean loggedError;
    /** The port's shared-memory side, whose sleeping reader a one-byte datagram wakes; null without one. */
    private IpcPort ipcPort;
    /** Which packets begin a datagram; set as the channel is made, before any read. */
    private DatagramBoundaries boundaries = new DatagramBoundaries(false);

    SwitchPortHandler(int portIndex, SwitchProgram program, ChannelResultSink sink, SwitchCounters counters) {
        this.portIndex = portIndex;
        this.program = program;
        this.sink = sink;
        this.counters = counters;
    }

    /** Whether the channel receives with UDP GRO: set as it is made, before it is registered. */
    void coalescing(boolean coalescing) {
        this.boundaries = new DatagramBoundaries(coalescing);
    }

    /** Set once, on the port's event loop, before any worker can know the port's ring. */
    void ipcPort(IpcPort port) {
        this.ipcPort = port;
    }

    @Override
    public void channelRead(ChannelHandlerContext context, Object message) {
        if (!(message instanceof DatagramPacket datagram)) {
            ReferenceCountUtil.release(message);
            return;
        }
        if (boundaries.begins(datagram.content())) {
            counters.increment(SwitchCounter.DATAGRAMS_RECEIVED);
        }
        if (ipcPort != null && datagram.content().readableBytes() == IpcPoller.DOORBELL_BYTES) {
            // No packet of the protocol is this short: a co-located worker wrote to the ring while it slept.
            datagram.release();
            counters.increment(SwitchCounter.PACKETS_RECEIVED);
            counters.increment(SwitchCounter.IPC_WAKE_UPS_RECEIVED);
            ipcPort.wakeUp();
            return;
        }
        try {
            ByteBuf content = datagram.content();
            // Receive buffers are contiguous, so this is one view (a small slice object per datagram in Netty 4.2).
            ByteBuffer packet = content.internalNioBuffer(content.readerIndex(), content.readableBytes())
                    .order(ByteOrder.BIG_ENDIAN);
            InetSocketAddress sender = datagram.sender();
            sink.begin(context, content);
            if (sender != null && sender.getAddress() instanceof Inet4Address source) {
                program.process(Ipv4.toInt(source), sender.getPort(), portIndex, packet);
            } else {
                program.dropNonIpv4Source();
            }
        } finally {
            sink.end();
            datagram.release();
        }
    }

    /** The end of one batched read (recvmmsg): the results of every slot it completed go out together. */
    @Override
    public void channelReadComplete(ChannelHandlerContext context) {
        sink.flush();
        context.fireChannelReadComplete();
    }

    /**
     * Failed sends (the void promise reports them here) and socket errors: counted, and only the
     * first is logged, so a flood of errors cannot flood the log.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
        counters.increment(SwitchCounter.IO_ERRORS);
        if (!loggedError) {
            loggedError = true;
            LOG.warn("switch port {}: {} (further errors are only counted in {})", context.channel().localAddress(),
                    cause.toString(), SwitchCounter.IO_ERRORS.counterName(), cause);
        }
    }
}
