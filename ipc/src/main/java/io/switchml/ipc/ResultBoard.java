package io.switchml.ipc;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One job's results on the switch's shared-memory port: a completed slot's result is written here
 * once, at the slot's place, and every co-located worker reads it from there (no copy per worker).
 * A slot's next result can only be written after every worker sent its next packet on that slot,
 * which a worker does only after it has read this one, so a result is never overwritten while it
 * is read (a retransmission's answer rewrites the same bytes).
 *
 * <p>Layout: a header (magic, workers, slots, slots per thread, record bytes); a flag per rank that
 * says it reads its results here; a wake flag per worker thread (rank, thread), each on its own
 * cache line; per slot a sequence number (bumped by each write, with release semantics) and the
 * result's length; then the slots' records.
 */
public final class ResultBoard {
    /** How a board's file name ends; its job's request rings are named after the rest ({@link RequestRing#fileName}). */
    public static final String SUFFIX = ".results";
    private static final long MAGIC = 0x53574d4c424f4152L; // "SWMLBOAR"
    private static final int LINE = 64;
    private static final int PAGE = 4096;
    private static final int WORKERS_OFFSET = 8;
    private static final int SLOTS_OFFSET = 12;
    private static final int SLOTS_PER_THREAD_OFFSET = 16;
    private static final int RECORD_BYTES_OFFSET = 20;
    private static final int ATTACHED_OFFSET = LINE;

    private final UnsafeBuffer buffer;
    private final MappedByteBuffer mapped;
    /** Where it was mapped from, and its size then (see {@link #whole()}). */
    private final Path file;
    private final long fileBytes;
    private final int workers;
    private final int slots;
    private final int slotsPerThread;
    private final int threads;
    private final int recordBytes;
    private final int wakeOffset;
    private final int seqOffset;
    private final int recordsOffset;

    /** Where everything lies in a board of this shape. */
    private record Layout(int workers, int slots, int slotsPerThread, int recordBytes) {
        Layout {
            if (workers < 1 || slots < 1 || slotsPerThread < 1 || slots % slotsPerThread != 0 || recordBytes < 1) {
                throw new IllegalArgumentException("bad result board shape: " + workers + " workers, " + slots
                        + " slots, " + slotsPerThread + " per thread, " + recordBytes + "-byte records");
            }
        }

        int threads() {
            return slots / slotsPerThread;
        }

        int wakeOffset() {
            return align(ATTACHED_OFFSET + 4L * workers, LINE);
        }

        int seqOffset() {
            return align(wakeOffset() + (long) LINE * workers * threads(), LINE);
        }

        int recordsOffset() {
            return align(seqOffset() + 8L * slots, PAGE);
        }

        long fileBytes() {
            return (long) recordsOffset() + (long) slots * recordBytes;
        }
    }

    private ResultBoard(Path file, MappedByteBuffer mapped, Layout layout) {
        this.file = file;
        this.fileBytes = layout.fileBytes();
        this.mapped = mapped;
        this.buffer = new UnsafeBuffer(mapped);
        this.workers = layout.workers();
        this.slots = layout.slots();
        this.slotsPerThread = layout.slotsPerThread();
        this.threads = layout.threads();
        this.recordBytes = layout.recordBytes();
        this.wakeOffset = layout.wakeOffset();
        this.seqOffset = layout.seqOffset();
        this.recordsOffset = layout.recordsOffset();
    }

    private static int align(long value, int to) {
        long aligned = (value + to - 1) / to * to;
        if (aligned > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a result board of " + aligned + " bytes is too large");
        }
        return (int) aligned;
    }

    /**
     * Creates a job's board (mode 0600).
     *
     * @param packetBytes the longest packet of the job (its size code's)
     */
    public static ResultBoard create(Path file, int workers, int slots, int slotsPerThread, int packetBytes) {
        Layout layout = new Layout(workers, slots, slotsPerThread, align(packetBytes, LINE));
        MappedByteBuffer mapped = MappedFile.create(file, layout.fileBytes());
        UnsafeBuffer header = new UnsafeBuffer(mapped);
        header.putInt(WORKERS_OFFSET, workers);
        header.putInt(SLOTS_OFFSET, slots);
        header.putInt(SLOTS_PER_THREAD_OFFSET, slotsPerThread);
        header.putInt(RECORD_BYTES_OFFSET, layout.recordBytes());
        header.putLongVolatile(0, MAGIC);
        return new ResultBoard(file, mapped, layout);
    }

    /** Maps a board the switch created, checking that it is one and whole. */
    public static ResultBoard open(Path file) {
        MappedByteBuffer mapped = MappedFile.open(file);
        if (mapped.capacity() < PAGE) {
            throw new IllegalArgumentException(file + " is not a switchml result board");
        }
        UnsafeBuffer header = new UnsafeBuffer(mapped);
        if (header.getLongVolatile(0) != MAGIC) {
            throw new IllegalArgumentException(file + " is not a switchml result board");
        }
        Layout layout;
        try {
            layout = new Layout(header.getInt(WORKERS_OFFSET), header.getInt(SLOTS_OFFSET),
                    header.getInt(SLOTS_PER_THREAD_OFFSET), header.getInt(RECORD_BYTES_OFFSET));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + " is not a whole switchml result board: " + e.getMessage(), e);
        }
        if (layout.fileBytes() != mapped.capacity()) {
            throw new IllegalArgumentException(file + " is not a whole switchml result board");
        }
        return new ResultBoard(file, mapped, layout);
    }

    /** Whether the board's file still has all its bytes ({@link MappedFile#whole}); asked after a fault. */
    public boolean whole() {
        return MappedFile.whole(file, fileBytes);
    }

    /** Whether the board's file exists and was truncated ({@link MappedFile#shrank}); asked before any fault. */
    public boolean shrank() {
        return MappedFile.shrank(file, fileBytes);
    }

    /** The file it was mapped from. */
    public Path file() {
        return file;
    }

    public int workers() {
        return workers;
    }

    public int slots() {
        return slots;
    }

    public int slotsPerThread() {
        return slotsPerThread;
    }

    /** Rank {@code rank} reads its results here from now on (before it sends its first packet). */
    public void attach(int rank) {
        checkRank(rank);
        buffer.putIntVolatile(ATTACHED_OFFSET + 4 * rank, 1);
    }

    private void checkRank(int rank) {
        if (rank < 0 || rank >= workers) {
            throw new IllegalArgumentException("rank " + rank + " outside the board's 0.." + (workers - 1));
        }
    }

    /** Whether rank {@code rank} reads its results here; the switch sends them over UDP otherwise. */
    public boolean attached(int rank) {
        return buffer.getIntVolatile(ATTACHED_OFFSET + 4 * rank) != 0;
    }

    /** The wake flag of worker thread {@code thread} of rank {@code rank}, for that thread. */
    public WakeFlag readerSleeping(int rank, int thread) {
        checkRank(rank);
        if (thread < 0 || thread >= threads) {
            throw new IllegalArgumentException("worker thread " + thread + " outside the board's 0.." + (threads - 1));
        }
        return new WakeFlag(buffer, wakeFlagOffset(rank, thread));
    }

    /** For the switch, after a publish: whether it must wake that worker thread (see {@link WakeFlag#takeWakeUp}). */
    public boolean takeWakeUp(int rank, int thread) {
        return WakeFlag.takeWakeUp(buffer, wakeFlagOffset(rank, thread));
    }

    private int wakeFlagOffset(int rank, int thread) {
        return wakeOffset + LINE * (rank * threads + thread);
    }

    /** The switch's one writer of that slot writes its result, {@code result}'s position to limit. */
    public void publish(int slot, ByteBuffer result) {
        int length = result.remaining();
        int seq = seqOffset + 8 * slot;
        buffer.putBytes(recordsOffset + slot * recordBytes, result, result.position(), length);
        buffer.putInt(seq + 4, length);
        buffer.putIntOrdered(seq, buffer.getInt(seq) + 1);
    }

    /** How many results were written to the slot; a reader that sees it change reads the length and record. */
    public int sequence(int slot) {
        return buffer.getIntVolatile(seqOffset + 8 * slot);
    }

    /** The length of the slot's latest result; read after {@link #sequence}. */
    public int length(int slot) {
        return buffer.getInt(seqOffset + 8 * slot + 4);
    }

    /** A big-endian view of the slot's record, made once per slot by its reader. */
    public ByteBuffer record(int slot) {
        return mapped.slice(recordsOffset + slot * recordBytes, recordBytes).order(ByteOrder.BIG_ENDIAN);
    }
}
