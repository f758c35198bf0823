package io.switchml.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;

import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

/**
 * One worker thread's fault injector (see {@link FaultInjection}): a Netty handler placed in the
 * worker thread's channel pipeline between the socket and the {@link WorkerLane}, so every datagram
 * the lane writes and every datagram the socket delivers to it passes here. Each datagram is
 * dropped, or passed on once or twice (duplicated), each copy now or after a random delay; delayed
 * copies are scheduled on the channel's own event loop, the lane's thread, so everything stays
 * single-threaded per lane.
 *
 * <p>Buffers: a dropped datagram is released here; a duplicate is a retained duplicate (shared
 * content, own indices), so each copy is released once by whoever consumes it (the socket for a
 * write, the lane's {@code SimpleChannelInboundHandler} for a read). An outgoing datagram that is
 * held back or duplicated is first copied, since the lane resends and rewrites its own buffers.
 * A delayed datagram is owned by this handler until it is passed on; those still held when the
 * channel closes are released then.
 *
 * <p>Decisions come from the injector's own generator, seeded from (seed, rank, worker thread), and
 * draw nothing for a fault whose rate is 0. When all rates are 0 the handler is not installed.
 */
final class FaultInjector extends ChannelDuplexHandler {
    private final double dropRate;
    private final double duplicateRate;
    private final double delayRate;
    private final long maxDelayNanos;
    private final boolean delays;
    private final RandomGenerator random;
    private final WorkerStatistics statistics;
    /** Datagrams held back, until due or until the channel closes. */
    private final Set<Held> held = new HashSet<>();
    private boolean closed;

    FaultInjector(FaultInjection faults, int rank, int lane, WorkerStatistics statistics) {
        this(faults, new SplittableRandom(seed(faults.seed(), rank, lane)), statistics);
    }

    /** With the generator its decisions draw from (the other constructor seeds one per worker thread). */
    FaultInjector(FaultInjection faults, RandomGenerator random, WorkerStatistics statistics) {
        this.dropRate = faults.dropRate();
        this.duplicateRate = faults.duplicateRate();
        this.delayRate = faults.delayRate();
        this.maxDelayNanos = TimeUnit.MICROSECONDS.toNanos(faults.maxDelayMicros());
        this.delays = faults.delays();
        this.random = random;
        this.statistics = statistics;
    }

    /** The generator seed of worker thread {@code lane} of rank {@code rank}. */
    static long seed(long seed, int rank, int lane) {
        return mix(mix(mix(seed) + rank) + lane);
    }

    /** How many copies of the next datagram go on: 0 (dropped), 1, or 2 (duplicated). */
    int copies() {
        if (dropRate > 0 && random.nextDouble() < dropRate) {
            statistics.injectedDrops.increment();
            return 0;
        }
        if (duplicateRate > 0 && random.nextDouble() < duplicateRate) {
            statistics.injectedDuplicates.increment();
            return 2;
        }
        return 1;
    }

    /** How long to hold the next copy back, in nanoseconds; 0: pass it on now. */
    long delayNanos() {
        if (!delays || (delayRate < 1 && random.nextDouble() >= delayRate)) {
            return 0;
        }
        long delay = random.nextLong(maxDelayNanos + 1);
        if (delay > 0) {
            statistics.injectedDelays.increment();
        }
        return delay;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!isDatagram(msg) || closed) {
            ctx.write(msg, promise);
            return;
        }
        int copies = copies();
        if (copies == 0) {
            ReferenceCountUtil.release(msg);
            promise.trySuccess(); // as far as the sender can tell, it went out
            return;
        }
        long delay = delayNanos();
        long copyDelay = copies == 2 ? delayNanos() : 0;
        if (delay > 0 || copies == 2) {
            msg = ownCopy(ctx, msg); // the lane rewrites its send buffers once answered: keep what was sent
        }
        Object copy = copies == 2 ? retainedDuplicate(msg) : null;
        write(ctx, msg, promise, delay);
        if (copy != null) {
            write(ctx, copy, ctx.voidPromise(), copyDelay);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!isDatagram(msg) || closed) {
            ctx.fireChannelRead(msg);
            return;
        }
        int copies = copies();
        if (copies == 0) {
            ReferenceCountUtil.release(msg);
            return;
        }
        Object copy = copies == 2 ? retainedDuplicate(msg) : null;
        read(ctx, msg, delayNanos());
        if (copy != null) {
            read(ctx, copy, delayNanos());
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        releaseHeld();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseHeld();
    }

    /** Datagrams held back now: delayed and not yet due. */
    int heldCount() {
        return held.size();
    }

    private void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise, long delay) {
        if (delay == 0) {
            ctx.write(msg, promise);
        } else {
            hold(ctx, new Held(msg, promise), delay);
        }
    }

    private void read(ChannelHandlerContext ctx, Object msg, long delay) {
        if (delay == 0) {
            ctx.fireChannelRead(msg); // the socket's own channelReadComplete follows
        } else {
            hold(ctx, new Held(msg, null), delay);
        }
    }

    private void hold(ChannelHandlerContext ctx, Held h, long delay) {
        held.add(h);
        h.timer = ctx.executor().schedule(() -> due(ctx, h), delay, TimeUnit.NANOSECONDS);
    }

    private void due(ChannelHandlerContext ctx, Held h) {
        if (!held.remove(h)) {
            return; // released when the channel closed
        }
        if (h.promise != null) {
            ctx.writeAndFlush(h.msg, h.promise);
        } else {
            ctx.fireChannelRead(h.msg);
            ctx.fireChannelReadComplete(); // the lane flushes what the result released
        }
    }

    private void releaseHeld() {
        closed = true;
        if (held.isEmpty()) {
            return;
        }
        List<Held> all = new ArrayList<>(held);
        held.clear();
        for (Held h : all) {
            if (h.timer != null) {
                h.timer.cancel(false);
            }
            ReferenceCountUtil.release(h.msg);
            if (h.promise != null && !h.promise.isVoid()) {
                h.promise.tryFailure(new ClosedChannelException());
            }
        }
    }

    private static boolean isDatagram(Object msg) {
        return msg instanceof ByteBuf || msg instanceof ByteBufHolder;
    }

    /** A datagram with its own bytes, for one that the sender may rewrite while it is held here. */
    private static Object ownCopy(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf b)) {
            return msg;
        }
        ByteBuf copy = ctx.alloc().directBuffer(b.readableBytes()).writeBytes(b, b.readerIndex(), b.readableBytes());
        b.release();
        return copy;
    }

    private static Object retainedDuplicate(Object msg) {
        return msg instanceof ByteBuf b ? b.retainedDuplicate() : ((ByteBufHolder) msg).retainedDuplicate();
    }

    /** Stafford's mix 13 (as SplittableRandom's), to derive independent seeds. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** A datagram held back: a write (with its promise) or a read (promise null). */
    private static final class Held {
        final Object msg;
        final ChannelPromise promise;
        ScheduledFuture<?> timer;

        Held(Object msg, ChannelPromise promise) {
            this.msg = msg;
            this.promise = promise;
        }
    }
}
