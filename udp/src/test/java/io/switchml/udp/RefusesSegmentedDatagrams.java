package io.switchml.udp;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.epoll.SegmentedDatagramPacket;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;

/**
 * For tests on an embedded channel: refuses every segmented datagram written through it, as the kernel does where
 * the path's device cannot checksum one (EIO), and lets every other write through. Counts the refusals.
 */
public final class RefusesSegmentedDatagrams extends ChannelOutboundHandlerAdapter {
    private int refused;

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof SegmentedDatagramPacket) {
            refused++;
            ReferenceCountUtil.release(msg);
            promise.setFailure(new IOException("sendmmsg(..) failed: Input/output error"));
            return;
        }
        ctx.write(msg, promise);
    }

    /** The segmented datagrams refused so far. */
    public int refused() {
        return refused;
    }
}
