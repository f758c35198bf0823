package io.switchml.protocol;

/**
 * Which packet goes where, for one worker thread's share of one all-reduce (docs/ARCHITECTURE.md section 4).
 *
 * <p>The share is cut into {@code blocks} blocks of k elements. Packets are numbered q = 0, 1, ...;
 * packet q uses window slot {@code q mod window}, and the result of packet q releases packet
 * {@code q + window} on the same slot (self-clocking). With a bootstrap round (float32), packet q
 * carries the exponent of block q (while q &lt; blocks) and the values of block {@code q - window}
 * (once q &gt;= window), so the first window only carries exponents; without one (int32), packet q
 * carries block q. Every worker derives the same numbering from the same sizes.
 */
public final class SlotSchedule {
    /** The most packets one worker thread sends in one all-reduce (2^24: 32 Gi elements at 2048 per packet). */
    public static final int MAX_PACKETS = 1 << 24;

    private final int blocks;
    private final int window;
    private final int lag;

    public SlotSchedule(int blocks, int window, boolean bootstrap) {
        if (blocks < 0) {
            throw new IllegalArgumentException("blocks " + blocks + " < 0");
        }
        if (window < 1) {
            throw new IllegalArgumentException("window " + window + " < 1");
        }
        this.blocks = blocks;
        this.window = window;
        this.lag = bootstrap ? window : 0;
        if ((long) blocks + lag > MAX_PACKETS) {
            throw new IllegalArgumentException(blocks + " blocks exceed the " + (MAX_PACKETS - lag)
                    + " one worker thread can send in one all-reduce; use more threads or larger packets");
        }
    }

    public int blocks() {
        return blocks;
    }

    public int window() {
        return window;
    }

    /** One past the last packet number. */
    public int endPacket() {
        return blocks == 0 ? 0 : blocks + lag;
    }

    /**
     * Number of packets sent (each once, not counting retransmissions). With a bootstrap round a
     * packet may carry both an exponent and values, and packets {@code [blocks, window)} carry
     * nothing and are not sent: {@code blocks + min(blocks, window)}.
     */
    public int packetCount() {
        return blocks + Math.min(blocks, lag);
    }

    /** The first packet on window slot {@code slot}, or -1 when the slot is unused. */
    public int firstPacket(int slot) {
        return slot < blocks ? slot : -1;
    }

    /** The packet that the result of packet q releases, or -1 when the slot is done. */
    public int nextPacket(int q) {
        int next = q + window;
        return next < endPacket() ? next : -1;
    }

    public int slotOf(int q) {
        return q % window;
    }

    /** The block whose values packet q carries, or -1 for a bootstrap packet. */
    public int dataBlock(int q) {
        return q >= lag ? q - lag : -1;
    }

    /**
     * How many of the blocks that follow packet q's exponent block on its slot ({@code e + window},
     * {@code e + 2 window}, ...) exist, at most {@code limit}; 0 when q carries no exponent. A packet
     * that stands in for a block zero everywhere reports on these (docs/ARCHITECTURE.md section 14).
     */
    public int blocksAhead(int q, int limit) {
        int e = exponentBlock(q);
        if (e < 0) {
            return 0;
        }
        return (int) Math.min(limit, (blocks - 1L - e) / window);
    }

    /** The block whose exponent packet q carries, or -1 when it carries none. */
    public int exponentBlock(int q) {
        return lag > 0 && q < blocks ? q : -1;
    }
}
