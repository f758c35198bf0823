package io.switchml.client;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.switchml.api.SwitchMLException;
import io.switchml.ipc.IpcPoller;
import io.switchml.ipc.RequestRing;
import io.switchml.ipc.ResultBoard;
import io.switchml.ipc.WakeFlag;
import io.switchml.protocol.Ipv4Addresses;
import org.agrona.collections.IntArrayQueue;

import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * A worker thread's link to the switch's shared-memory port (docs/ARCHITECTURE.md section 11), the
 * medium beneath its {@link LaneEngine} in place of the socket: the engine's packets go straight from
 * its send buffers into the job's request ring for its switch port, and the results of the thread's slots are read in
 * place from the job's board and handed to the engine, with no datagram made and nothing allocated
 * per packet. The socket stays: it is the thread's identity at the switch, and it carries the
 * one-byte wake-ups both ways. Everything runs on the thread's event loop ({@link WorkerLane}).
 */
final class IpcLink {
    private static final byte[] WAKE_UP = new byte[IpcPoller.DOORBELL_BYTES];
    /** How often a polling link checks that its files are whole (a file's size: one system call). */
    private static final long CHECK_NANOS = 100_000_000L;

    /** Where the link hands results and what it tells when its files are gone. */
    interface Receiver {
        /** A result read in place: its bytes from position to limit, valid until this call returns. */
        void onResult(ByteBuffer result, long now);

        /** The results of one poll were handed on: packets they released may go out. */
        void resultsDone();

        /** The port can no longer be used: the job's operations on this worker fail. */
        void broken(SharedMemoryPortBroken error);
    }

    private final RequestRing ring;
    private final ResultBoard board;
    private final int rank;
    private final int thread;
    private final int slotBase;
    private final int window;
    private final WorkerStatistics statistics;
    /** Per window slot: its record on the board (a view made once), and the board's write count for it last handed on. */
    private final ByteBuffer[] records;
    private final int[] delivered;
    /** Per window slot: a view of the engine's send buffer (made once) and the length it last sent. */
    private final ByteBuffer[] sending;
    private final int[] lengths;
    /** Slots whose packets the full ring could not take yet, oldest first: written before any newer one. */
    private final IntArrayQueue waiting = new IntArrayQueue();
    /** How long the poller spins after work before sleeping ({@code SwitchMLConfig.ipcSpinNanos}). */
    private final long spinNanos;
    private Channel channel;
    private Receiver receiver;
    private int sourceIpv4;
    private int sourcePort;
    private IpcPoller poller;
    /** The ring's or the board's file shrank under the mapping: the link reads and writes nothing more. */
    private boolean broken;
    /** When the files were last checked ({@link #failIfShrank}). */
    private long checkedAt = System.nanoTime();
    /** A packet went to the ring since the last flush: the switch may need waking. */
    private boolean written;

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
        this.records = new ByteBuffer[window];
        this.delivered = new int[window];
        this.sending = new ByteBuffer[window];
        this.lengths = new int[window];
    }

    /** Starts polling the board for {@code receiver}, on {@code channel}'s event loop; from that loop. */
    void start(Channel channel, Receiver receiver) {
        this.channel = channel;
        this.receiver = receiver;
        InetSocketAddress local = (InetSocketAddress) channel.localAddress();
        sourceIpv4 = Ipv4Addresses.toInt(((Inet4Address) local.getAddress()).getAddress());
        sourcePort = local.getPort();
        for (int i = 0; i < window; i++) {
            records[i] = board.record(slotBase + i);
            delivered[i] = board.sequence(slotBase + i);
        }
        WakeFlag sleeping = board.readerSleeping(rank, thread);
        poller = new IpcPoller(channel.eventLoop(), this::poll, late -> {
            if (!failIfShrank(late)) {
                throw late;
            }
        }, sleeping, spinNanos);
        poller.start();
    }

    /** Stops polling; safe from any thread, and more than once. */
    void close() {
        if (poller != null) {
            poller.close();
        }
    }

    /** Window slot {@code slot}'s packet, bytes 0..length-1 of the engine's buffer, to the ring. */
    void send(int slot, ByteBuffer packet, int length) {
        if (sending[slot] == null) {
            sending[slot] = packet.duplicate();
        }
        lengths[slot] = length;
        if (!waiting.isEmpty() || !offer(slot)) {
            // The switch is behind: the packet waits here (the engine keeps its bytes until the result) and goes first
            // when the ring has room, so nothing is lost on this path. A slot that waits twice goes with its latest bytes.
            statistics.ipcRingFull.increment();
            waiting.addInt(slot);
        }
    }

    /** Writes the slot's packet if the ring has room (drops it once the link is broken). */
    private boolean offer(int slot) {
        if (broken) {
            return true;
        }
        ByteBuffer view = sending[slot];
        view.limit(lengths[slot]).position(0);
        boolean taken;
        try {
            taken = ring.offer(sourceIpv4, sourcePort, view);
        } catch (InternalError e) {
            if (!failIfShrank(e)) {
                throw e;
            }
            return true;
        }
        written |= taken;
        return taken;
    }

    /** Writes the packets that waited for room, oldest first; returns how many went. */
    private int offerWaiting() {
        int sent = 0;
        while (!waiting.isEmpty() && offer(waiting.peekInt())) {
            waiting.pollInt();
            sent++;
        }
        if (sent > 0) {
            flush();
        }
        return sent;
    }

    /** The packets written since the last flush are there: wakes the switch if it sleeps. */
    void flush() {
        if (written) {
            written = false;
            poller.workExpected(); // results are due: poll for them rather than wait to be woken
            if (ring.readerSleeping().takeWakeUp()) {
                channel.writeAndFlush(Unpooled.wrappedBuffer(WAKE_UP), channel.voidPromise());
            }
        }
    }

    /** A datagram on the thread's socket: a doorbell from the switch (returns true), or not this link's. */
    boolean doorbell(int bytes) {
        if (bytes != IpcPoller.DOORBELL_BYTES) {
            return false;
        }
        poller.wake(true);
        return true;
    }

    /** Writes what waited for room, and hands every new result of this thread's slots on; on the event loop. */
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
        return pollOnce(now); // a fault on the files reaches the poller's handler (failIfShrank)
    }

    private int pollOnce(long now) {
        int handed = waiting.isEmpty() ? 0 : offerWaiting();
        for (int i = 0; i < window; i++) {
            int slot = slotBase + i;
            int sequence = board.sequence(slot);
            if (sequence != delivered[i]) {
                delivered[i] = sequence;
                ByteBuffer result = records[i];
                result.limit(board.length(slot)).position(0);
                receiver.onResult(result, now);
                result.clear(); // the engine may have changed its position, limit and order
                handed++;
            }
        }
        if (handed > 0) {
            receiver.resultsDone();
        }
        return handed;
    }

    /**
     * When the ring's or the board's file shrank (a process of this user truncated it), stops the link and tells the
     * receiver, which fails the job's operations now rather than at their timeout; returns whether it did. Reading a
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
        waiting.clear();
        poller.close();
        String shrank = ringLost ? "the job's request ring " + ring.file() : "the job's result board " + board.file();
        receiver.broken(new SharedMemoryPortBroken("rank " + rank + ", thread " + thread + ": " + shrank
                + " of the switch's shared-memory port shrank under this worker (a process of this user truncated it):"
                + " no result can reach it there, so the job's operations fail now. Join again (over UDP, or through"
                + " the port of a restarted switch)", error));
        return true;
    }

    /** The shared-memory port can no longer be read or written: the job's operations on this worker fail. */
    static final class SharedMemoryPortBroken extends SwitchMLException {
        SharedMemoryPortBroken(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
