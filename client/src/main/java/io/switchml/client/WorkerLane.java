package io.switchml.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.SegmentedDatagramPacket;
import io.netty.channel.socket.DatagramPacket;
import io.switchml.protocol.PacketKey;
import io.switchml.protocol.PayloadSize;
import io.switchml.udp.DatagramBoundaries;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker thread's {@link LaneEngine} on its channel's Netty event loop: the engine's transport
 * over the thread's UDP socket, or over the switch's shared-memory port through an {@link IpcLink}
 * (packets to the request ring, results read in place from the board), its clock (a tick every
 * {@link LaneEngine#TICK_NANOS} while it is busy), and the hop onto the loop for calls from other threads. Every call into the engine happens
 * on the loop, so the engine needs no lock. The engine's packets are written as they are made and
 * flushed once per burst: after the results of one read, after a task's first window, after the
 * retransmissions of one tick. Over UDP with GSO, a burst's packets of one length go as one segmented datagram
 * ({@link SegmentRun}); with GRO, a run of results arrives as one read (docs/ARCHITECTURE.md section 17).
 */
final class WorkerLane extends SimpleChannelInboundHandler<DatagramPacket> implements LaneEngine.Transport,
        IpcLink.Receiver {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerLane.class);
    private final Channel channel;
    /** The shared-memory port's link, or null over UDP. */
    private final IpcLink link;
    private final LaneEngine engine;
    private final LaneEngine.FailureHandler failures;
    private final WorkerStatistics statistics;
    /** Per window slot: the engine's packet buffer, wrapped once. */
    private final ByteBuf[] packets;
    /** The packets of this burst not yet written, while they can go as one segmented datagram; null without GSO. */
    private final SegmentRun run;
    private final InetSocketAddress switchEndpoint;
    /** Turns segmentation off for good when the kernel refuses a segmented datagram on this path. */
    private final ChannelFutureListener segmentedSent = this::segmentedSent;
    /** Which results begin a datagram (with UDP GRO, a run of results arrives as one). */
    private final DatagramBoundaries boundaries;
    /** False once a segmented datagram failed (a path whose device cannot checksum it): one datagram per packet. */
    private boolean segmenting;
    /** Ticks while the engine is busy; null while it is idle, so that a waiting job wakes nobody. */
    private ScheduledFuture<?> timer;

    /**
     * @param link           the link to the switch's shared-memory port, or null to send and receive over the channel (UDP)
     * @param segmentation   over UDP, whether runs of full-size packets go as one segmented datagram (UDP GSO)
     * @param coalescing     over UDP, whether the channel receives runs of results as one datagram (UDP GRO)
     * @param switchEndpoint the switch's UDP endpoint, which the channel is connected to
     * @param packetKey      the key of the job's authenticated packets, or null (see {@link LaneEngine})
     */
    WorkerLane(int index, int window, PayloadSize size, int jobNumber, SwitchMLConfig config, boolean congestionControl,
               IpcLink link, boolean segmentation, boolean coalescing, WorkerStatistics statistics, LaneEngine.FailureHandler failures,
               Runnable silenceListener, Channel channel, InetSocketAddress switchEndpoint, PacketKey packetKey) {
        this.channel = channel;
        this.link = link;
        this.failures = failures;
        this.statistics = statistics;
        this.switchEndpoint = switchEndpoint;
        this.engine = new LaneEngine(index, window, size, jobNumber, config, congestionControl, link != null, statistics,
                failures, silenceListener, this, packetKey);
        this.packets = new ByteBuf[window];
        for (int i = 0; i < window; i++) {
            packets[i] = Unpooled.wrappedBuffer(engine.packetBuffer(i));
        }
        this.segmenting = link == null && segmentation;
        this.run = segmenting ? new SegmentRun() : null;
        this.boundaries = new DatagramBoundaries(link == null && coalescing);
    }

    int index() {
        return engine.index();
    }

    /** Queues a task; safe from any thread. */
    void submit(LaneTask task) {
        channel.eventLoop().execute(() -> guarded(() -> engine.submit(task, System.nanoTime())));
    }

    /** Fails every queued and running task with {@code error}; safe from any thread. */
    void abortAll(RuntimeException error) {
        channel.eventLoop().execute(() -> {
            try {
                engine.abortAll(error);
            } catch (InternalError late) {
                // A fault on the shared-memory port's mapped files (when they shrank: the error being reported) is
                // raised after the access that caused it, wherever this thread is then, and once: so again.
                engine.abortAll(error);
            }
        });
    }

    /** Stops the engine for a failover ({@link LaneEngine#stop}); safe from any thread. */
    CompletableFuture<LaneEngine.Snapshot> stop() {
        CompletableFuture<LaneEngine.Snapshot> snapshot = new CompletableFuture<>();
        channel.eventLoop().execute(() -> {
            try {
                snapshot.complete(engine.stop());
            } catch (RuntimeException | Error e) {
                snapshot.completeExceptionally(e); // the failover says why rather than wait for its timeout
                throw e;
            }
        });
        return snapshot;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (link != null) {
            link.start(channel, this);
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (link != null) {
            link.close();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        handlerRemoved(ctx);
        ctx.fireChannelInactive();
    }

    @Override
    public void send(int slot, ByteBuffer packet, int length) {
        if (link != null) {
            link.send(slot, packet, length);
            return;
        }
        if (!segmenting) {
            write(slot, length);
        } else if (!run.add(slot, length)) {
            writeRun();
            if (segmenting) {
                run.add(slot, length);
            } else {
                write(slot, length); // the kernel refused that run: one datagram per packet from now on
            }
        }
    }

    @Override
    public void flush() {
        if (link != null) {
            link.flush();
            return;
        }
        if (run != null) {
            writeRun();
        }
        channel.flush();
    }

    private void write(int slot, int length) {
        ByteBuf buffer = packets[slot];
        buffer.setIndex(0, length);
        channel.write(buffer.retain(), channel.voidPromise());
        statistics.datagramsSent.increment();
    }

    /**
     * Writes the run of packets gathered so far: one packet as it is, several as one datagram gathered from their
     * slots' buffers (no copy), which the kernel cuts at the first packet's length; one datagram each where the
     * kernel refused an earlier run.
     */
    private void writeRun() {
        if (run.isEmpty()) {
            return;
        }
        if (run.count() == 1 || !segmenting) {
            for (int i = 0; i < run.count(); i++) {
                write(run.slot(i), run.length(i));
            }
        } else {
            CompositeByteBuf bytes = channel.alloc().compositeDirectBuffer(run.count());
            for (int i = 0; i < run.count(); i++) {
                bytes.addComponent(true, packets[run.slot(i)].retainedSlice(0, run.length(i)));
            }
            channel.write(new SegmentedDatagramPacket(bytes, run.segmentBytes(), switchEndpoint))
                    .addListener(segmentedSent);
            statistics.segmentedDatagrams.increment();
            statistics.datagramsSent.increment();
        }
        run.clear();
    }

    /**
     * A segmented datagram the kernel refused (EIO where the path's device cannot checksum it, EINVAL where it is
     * larger than the path allows): its packets count as lost and are resent, one datagram each from now on.
     */
    private void segmentedSent(ChannelFuture sent) {
        if (!sent.isSuccess() && segmenting) {
            segmenting = false;
            statistics.udpSegmentationOff.increment();
            LOG.warn("worker thread {}: the kernel refused a segmented UDP datagram to the switch at {} ({}); sending one"
                    + " datagram per packet from now on (udpSegmentation=off avoids the attempt)", engine.index(),
                    switchEndpoint, sent.cause().toString());
        }
    }

    @Override
    public void onResult(ByteBuffer result, long now) {
        engine.onResult(result, now);
    }

    @Override
    public void resultsDone() {
        flush();
    }

    @Override
    public void broken(IpcLink.SharedMemoryPortBroken error) {
        failures.laneFailed(error); // no result can arrive any more: fail now, not at the timeout
    }

    @Override
    public void ticks(boolean needed) {
        if (needed && timer == null) {
            // Guarded: a periodic task that throws is never run again, and the engine's timeouts would stop with it.
            timer = channel.eventLoop().scheduleAtFixedRate(() -> guarded(() -> engine.tick(System.nanoTime())),
                    LaneEngine.TICK_NANOS, LaneEngine.TICK_NANOS, TimeUnit.NANOSECONDS);
        } else if (!needed && timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket msg) {
        ByteBuf content = msg.content();
        if (link != null && link.doorbell(content.readableBytes())) {
            return;
        }
        if (boundaries.begins(content)) {
            statistics.datagramsReceived.increment();
        }
        // Receive buffers are contiguous, so this is one view (a small slice object per datagram in Netty 4.2).
        engine.onResult(content.internalNioBuffer(content.readerIndex(), content.readableBytes()), System.nanoTime());
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        flush();
    }

    /**
     * Runs a task of the loop, taking the fault that a shrunk file of the shared-memory port raises on whatever this
     * thread runs next (the link then fails the job's operations, once): anything else goes on to the loop.
     */
    private void guarded(Runnable task) {
        try {
            task.run();
        } catch (InternalError late) {
            if (link == null || !link.failIfShrank(late)) {
                throw late;
            }
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof java.net.PortUnreachableException) {
            // Nothing listens at the switch's port (it is gone or restarting): the timers and the
            // watch deal with that; the ICMP error itself says nothing more.
            return;
        }
        if (cause instanceof InternalError && link != null && link.failIfShrank(cause)) {
            return; // a page of the shared-memory port's files was gone: the link said so (above)
        }
        ctx.fireExceptionCaught(cause);
    }
}
