package io.switchml.ipc;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * One job's requests to one switch port on the shared-memory port: every co-located worker thread of
 * the job whose slots that port serves writes its packets here (an Agrona many-to-one ring in a
 * mapped file), and the port's thread reads them. Each record is the sender's identity (the IPv4
 * address and UDP port it registered at the controller, which the worker table knows it by) and the
 * packet, as it would have been sent over UDP. A ring per job, not per port, so that its name can go
 * once the job's ranks mapped it (docs/ARCHITECTURE.md section 11) and a ring that shrank stops that
 * job alone.
 *
 * <p>The file is the ring, then a page of its own fields: a magic number, and the wake flag by which
 * the port's thread says it sleeps (see {@link IpcPoller}).
 */
public final class RequestRing {
    /** Ahead of each packet: the sender's IPv4 address and UDP port. */
    public static final int IDENTITY_BYTES = 8;
    private static final long MAGIC = 0x53574d4c52494e47L; // "SWMLRING"
    static final int FIELDS_BYTES = 4096;
    /**
     * How long a record a writer claimed may stay uncommitted before the reader skips it: a writer between its
     * claim and its commit copies one packet (microseconds); one that stays longer died mid-write (SIGKILL, a
     * crash) and would otherwise block the ring, every job on the port with it, for good.
     */
    public static final long UNBLOCK_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int MAGIC_OFFSET = 0;
    private static final int WAKE_OFFSET = 64;

    private final ManyToOneRingBuffer ring;
    private final UnsafeBuffer ringBuffer;
    private final WakeFlag consumerSleeping;
    /** The ring's memory as a big-endian byte buffer, positioned on one packet at a time for the reader. */
    private final ByteBuffer packetView;
    private final Reader reader = new Reader();
    /** When the reader first found the ring blocked by an uncommitted record, or -1. */
    private long blockedSince = -1;
    private long unblocked;
    /** The file it was mapped from and its size then, to tell whether it shrank. */
    private Path file;
    private long fileBytes;

    /** What the reader does with each packet. */
    @FunctionalInterface
    public interface Consumer {
        /**
         * @param packet the packet, position to limit, big-endian and writable; valid during the call only
         */
        void packet(int sourceIpv4, int sourcePort, ByteBuffer packet);
    }

    private RequestRing(MappedByteBuffer mapped, int capacity) {
        this.ringBuffer = new UnsafeBuffer(mapped, 0, capacity + RingBufferDescriptor.TRAILER_LENGTH);
        this.ring = new ManyToOneRingBuffer(ringBuffer);
        UnsafeBuffer fields = new UnsafeBuffer(mapped, capacity + RingBufferDescriptor.TRAILER_LENGTH, FIELDS_BYTES);
        this.consumerSleeping = new WakeFlag(fields, WAKE_OFFSET);
        this.packetView = mapped.duplicate().order(ByteOrder.BIG_ENDIAN);
        if (fields.getLong(MAGIC_OFFSET) != MAGIC) {
            throw new IllegalArgumentException("not a switchml request ring");
        }
    }

    /**
     * The name of the ring of switch port {@code portIndex} beside a job's result board, {@code boardFileName}
     * ({@code job-<number>-<random>.results}): {@code job-<number>-<random>.port-<i>.requests}. The controller offers
     * the board's name; a worker finds the rings by this rule.
     */
    public static String fileName(String boardFileName, int portIndex) {
        String stem = boardFileName.endsWith(ResultBoard.SUFFIX)
                ? boardFileName.substring(0, boardFileName.length() - ResultBoard.SUFFIX.length()) : boardFileName;
        return stem + ".port-" + portIndex + ".requests";
    }

    /**
     * Creates the ring file (mode 0600).
     *
     * @param capacity bytes of records, a power of two
     */
    public static RequestRing create(Path file, int capacity) {
        if (Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("ring capacity must be a power of two, not " + capacity);
        }
        long fileBytes = (long) capacity + RingBufferDescriptor.TRAILER_LENGTH + FIELDS_BYTES;
        MappedByteBuffer mapped = MappedFile.create(file, fileBytes);
        new UnsafeBuffer(mapped, capacity + RingBufferDescriptor.TRAILER_LENGTH, FIELDS_BYTES).putLongVolatile(MAGIC_OFFSET, MAGIC);
        RequestRing ring = new RequestRing(mapped, capacity);
        ring.file = file;
        ring.fileBytes = fileBytes;
        return ring;
    }

    /** Whether the ring's file still has all its bytes ({@link MappedFile#whole}); asked after a fault. */
    public boolean whole() {
        return MappedFile.whole(file, fileBytes);
    }

    /** The file it was mapped from (whose name may be gone). */
    public Path file() {
        return file;
    }

    /** Whether the ring's file exists and was truncated ({@link MappedFile#shrank}); asked before any fault. */
    public boolean shrank() {
        return MappedFile.shrank(file, fileBytes);
    }

    /** Maps a ring the switch created. */
    public static RequestRing open(Path file) {
        MappedByteBuffer mapped = MappedFile.open(file);
        int capacity = mapped.capacity() - RingBufferDescriptor.TRAILER_LENGTH - FIELDS_BYTES;
        if (capacity <= 0 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException(file + " is not a switchml request ring (" + mapped.capacity() + " bytes)");
        }
        RequestRing ring;
        try {
            ring = new RequestRing(mapped, capacity);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + " is not a switchml request ring");
        }
        ring.file = file;
        ring.fileBytes = mapped.capacity();
        return ring;
    }

    /**
     * Writes one packet, {@code packet}'s position to limit; safe from any number of writers.
     *
     * @return false when the ring is full (the reader is behind): the packet is not written
     * @throws IllegalArgumentException when the packet is longer than {@link #maxPacketBytes}
     */
    public boolean offer(int sourceIpv4, int sourcePort, ByteBuffer packet) {
        int length = packet.remaining();
        int index = ring.tryClaim(1, IDENTITY_BYTES + length);
        if (index < 0) {
            return false;
        }
        ringBuffer.putInt(index, sourceIpv4);
        ringBuffer.putInt(index + 4, sourcePort);
        ringBuffer.putBytes(index + IDENTITY_BYTES, packet, packet.position(), length);
        ring.commit(index);
        return true;
    }

    /** The largest packet a record can hold. */
    public int maxPacketBytes() {
        return ring.maxMsgLength() - IDENTITY_BYTES;
    }

    /**
     * Reads up to {@code limit} packets; on the ring's one reader thread. Returns how many, or 1 when it skipped a
     * record that blocked the ring for {@link #UNBLOCK_AFTER_NANOS} (see {@link #unblocked}).
     */
    public int drain(Consumer consumer, int limit) {
        return drain(consumer, limit, System.nanoTime());
    }

    /** {@link #drain(Consumer, int)} at time {@code nowNanos}. */
    int drain(Consumer consumer, int limit, long nowNanos) {
        reader.consumer = consumer;
        int read = ring.read(reader, limit);
        if (read > 0 || ring.producerPosition() == ring.consumerPosition()) {
            blockedSince = -1;
            return read;
        }
        // Something was claimed that cannot be read yet: a writer in the middle of its copy, or one that died there.
        if (blockedSince < 0) {
            blockedSince = nowNanos;
        } else if (nowNanos - blockedSince >= UNBLOCK_AFTER_NANOS && ring.unblock()) {
            blockedSince = -1;
            unblocked++;
            return 1;
        }
        return 0;
    }

    /** Records of writers that died mid-write which the reader skipped so far. */
    public long unblocked() {
        return unblocked;
    }

    /** Set while the reader sleeps; a writer that takes it sends the wake-up. */
    public WakeFlag readerSleeping() {
        return consumerSleeping;
    }

    private final class Reader implements org.agrona.concurrent.MessageHandler {
        Consumer consumer;

        @Override
        public void onMessage(int msgTypeId, MutableDirectBuffer buffer, int index, int length) {
            if (length < IDENTITY_BYTES) {
                return; // a writer outside this protocol: nothing to read
            }
            ByteBuffer view = packetView;
            view.clear();
            view.limit(index + length).position(index + IDENTITY_BYTES);
            consumer.packet(buffer.getInt(index), buffer.getInt(index + 4), view);
        }
    }
}
