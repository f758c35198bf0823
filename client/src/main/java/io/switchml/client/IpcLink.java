package io.switchml.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import io.switchml.api.SwitchMLException;
import io.switchml.ipc.IpcPoller;
import io.switchml.ipc.RequestRing;
import io.switchml.ipc.ResultBoard;
import io.switchml.ipc.WakeFlag;
import io.switchml.protocol.Ipv4Addresses;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * A worker thread's link to the switch's shared-memory port (docs/ARCHITECTURE.md section 11), at
 * the socket's end of the thread's pipeline: the packets the lane writes go to the port's request
 * ring instead of the socket, and the results of the thread's slots are read from the job's board
 * and handed to the lane as if they were datagrams, so the lane (window, loss recovery, timeouts)
 * works unchanged. The socket stays: it is the thread's identity at the switch, and it carries the
 * one-byte wake-ups both ways.
 */
final class IpcLink extends ChannelDuplexHandler {
    private static final byte[] WAKE_UP = new byte[IpcPoller.DOORBELL_BYTES];
    /** How often a polling link checks that its files are whole (a file's size: one system call). */
    private static final long CHECK_NANOS = 100_000_000L;

    private final RequestRing ring;
    private final ResultBoard board;
    private final int rank;
    private final int thread;
    private final int slotBase;
    private final int window;
    private final WorkerStatistics statistics;
    /** Per window slot: its record on the board, and the board's write count for it last handed on. */
    private final ByteBuf[] records;
    private final int[] delivered;
    private ChannelHandlerContext context;
    private InetSocketAddress local;
    private InetSocketAddress remote;
    private int sourceIpv4;
    private int sourcePort;
    private IpcPoller poller;
    /** The ring's or the board's file shrank under the mapping: the link reads and writes nothing more. */
    private boolean broken;
    /** When the files were last checked ({@link #failIfShrank}). */
    private long checkedAt = System.nanoTime();
    /** A packet went to the ring since the last flush: the switch may need waking. */
    private boolean written;
    /** Packets the full ring could not take yet, oldest first: written before any newer one. */
    private final ArrayDeque<ByteBuf> waiting = new ArrayDeque<>();

    /** How long the poller spins after work before sleeping ({@code SwitchMLConfig.ipcSpinNanos}). */
    private final long spinNanos;

    IpcLink(RequestRing ring, ResultBoard board, int rank, int thread, int slotBase, int window,
            WorkerStatistics statistics, long spinNanos) {
        this.spinNanos = spinNanos;
        this.ring = ring;
        this.board = board;
        this.rank = rank;
        this.thread = thread;
        this.slotBase = slotBase;
        this.window = window;
        this.statistics = statistics;
        this.records = new ByteBuf[window];
        this.delivered = new int[window];
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        context = ctx;
        local = (InetSocketAddress) ctx.channel().localAddress();
        remote = (InetSocketAddress) ctx.channel().remoteAddress();
        sourceIpv4 = Ipv4Addresses.toInt(((Inet4Address) local.getAddress()).getAddress());
        sourcePort = local.getPort();
        for (int i = 0; i < window; i++) {
            records[i] = Unpooled.wrappedBuffer(board.record(slotBase + i));
            delivered[i] = board.sequence(slotBase + i);
        }
        WakeFlag sleeping = board.readerSleeping(rank, thread);
        poller = new IpcPoller(ctx.executor(), this::poll, late -> {
            if (!failIfShrank(late)) {
                throw late;
            }
        }, sleeping, spinNanos);
        poller.start();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        poller.close();
        waiting.forEach(ByteBuf::release);
        waiting.clear();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        poller.close();
        ctx.fireChannelInactive();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        ByteBuf packet = msg instanceof DatagramPacket datagram ? datagram.content() : msg instanceof ByteBuf b ? b : null;
        if (packet == null) {
            ctx.write(msg, promise);
            return;
        }
        promise.trySuccess();
        if (msg != packet) {
            packet.retain();
            ReferenceCountUtil.release(msg);
        }
        if (!waiting.isEmpty() || !offer(packet)) {
            // The switch is behind: the packet waits here (the lane keeps its bytes until the result) and goes first
            // when the ring has room, so nothing is lost on this path.
            statistics.ipcRingFull.increment();
            waiting.add(packet);
        }
    }

    /** Writes and releases the packet if the ring has room (drops it once the link is broken). */
    private boolean offer(ByteBuf packet) {
        if (broken) {
            packet.release();
            return true;
        }
        ByteBuffer view = packet.nioBufferCount() == 1 ? packet.internalNioBuffer(packet.readerIndex(), packet.readableBytes())
                : packet.nioBuffer();
        boolean taken;
        try {
            taken = ring.offer(sourceIpv4, sourcePort, view);
        } catch (InternalError e) {
            if (!failIfShrank(e)) {
                throw e;
            }
            packet.release();
            return true;
        }
        if (!taken) {
            return false;
        }
        written = true;
        packet.release();
        return true;
    }

    /** Writes the packets that waited for room, oldest first; returns how many went. */
    private int offerWaiting() {
        int sent = 0;
        for (ByteBuf packet; (packet = waiting.peek()) != null && offer(packet); sent++) {
            waiting.poll();
        }
        if (sent > 0) {
            flush(context);
        }
        return sent;
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (written) {
            written = false;
            poller.workExpected(); // results are due: poll for them rather than wait to be woken
            if (ring.readerSleeping().takeWakeUp()) {
                ctx.write(Unpooled.wrappedBuffer(WAKE_UP), ctx.voidPromise());
            }
        }
        ctx.flush();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof DatagramPacket datagram && datagram.content().readableBytes() == IpcPoller.DOORBELL_BYTES) {
            datagram.release();
            poller.wake(true);
            return;
        }
        ctx.fireChannelRead(msg);
    }

    /** Writes what waited for room, and hands every new result of this thread's slots to the lane; on the event loop. */
    private int poll() {
        if (broken) {
            return 0;
        }
        long now = System.nanoTime();
        if (now - checkedAt > CHECK_NANOS) {
            checkedAt = now;
            if (failIfShrank(null)) {
                return 0;
            }
        }
        return pollOnce(); // a fault on the files reaches the poller's handler (failIfShrank)
    }

    /**
     * When the ring's or the board's file shrank (a process of this user truncated it), stops the link and tells the
     * lane, which fails the job's operations now rather than at their timeout; returns whether it did. Reading a
     * mapped page that is gone raises an {@link InternalError} (the JVM's SIGBUS), but at a later point than the read
     * and on whatever code this thread runs then, so the files are also checked every {@link #CHECK_NANOS} of
     * polling, and the lane asks here when such an error reaches it.
     *
     * @param error the error seen, or null
     */
    boolean failIfShrank(Throwable error) {
        if (broken) {
            return true;
        }
        // Polling asks whether a file was truncated; after a fault, whether it is whole (a removed name then counts).
        boolean ringLost = error == null ? ring.shrank() : !ring.whole();
        if (!ringLost && (error == null ? !board.shrank() : board.whole())) {
            return false;
        }
        broken = true;
        waiting.forEach(ByteBuf::release);
        waiting.clear();
        poller.close();
        String shrank = ringLost ? "the port's request ring" : "the job's result board " + board.file();
        context.fireExceptionCaught(new SharedMemoryPortBroken("rank " + rank + ", thread " + thread + ": " + shrank
                + " of the switch's shared-memory port shrank under this worker (a process of this user truncated it):"
                + " no result can reach it there, so the job's operations fail now. Join again (over UDP, or through"
                + " the port of a restarted switch)", error));
        return true;
    }

    private int pollOnce() {
        int handed = waiting.isEmpty() ? 0 : offerWaiting();
        for (int i = 0; i < window; i++) {
            int slot = slotBase + i;
            int sequence = board.sequence(slot);
            if (sequence != delivered[i]) {
                delivered[i] = sequence;
                ByteBuf result = records[i].retain().setIndex(0, board.length(slot));
                context.fireChannelRead(new DatagramPacket(result, local, remote));
                handed++;
            }
        }
        if (handed > 0) {
            context.fireChannelReadComplete();
        }
        return handed;
    }

    /** The shared-memory port can no longer be read or written: the job's operations on this worker fail. */
    static final class SharedMemoryPortBroken extends SwitchMLException {
        SharedMemoryPortBroken(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
