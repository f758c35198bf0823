package io.switchml.dataplane;

/**
 * The switch program's bitmap checker: which workers have contributed to each copy of each slot.
 *
 * <p>A packet from rank r for (slot, set) sets r's bit in that copy and clears it in the other
 * copy, which frees the other copy for r's next round. A bit that was already set marks a
 * retransmission. SwitchML's bitmap is 32 bits; this one spans {@code ceil(n / 64)} longs, so a job
 * may have up to 256 workers.
 */
final class BitmapChecker {
    private final int slots;
    private final int words;
    /** seen[((set * slots) + slot) * words + word]. */
    private final long[] seen;

    BitmapChecker(int slots, int workers) {
        this.slots = slots;
        this.words = (workers + Long.SIZE - 1) / Long.SIZE;
        this.seen = new long[2 * slots * words];
    }

    /**
     * Records rank's packet for (set, slot) and frees its bit in the other set.
     *
     * @return true when rank had already contributed to this copy: the packet is a retransmission
     */
    boolean update(int set, int slot, int rank) {
        int word = rank >>> 6;
        long bit = 1L << rank; // Java shifts a long by rank mod 64
        int here = (set * slots + slot) * words + word;
        int other = ((set ^ 1) * slots + slot) * words + word;
        long before = seen[here];
        seen[here] = before | bit;
        seen[other] &= ~bit;
        return (before & bit) != 0;
    }

    /** Whether rank's bit is set in (set, slot); for inspection and tests. */
    boolean seen(int set, int slot, int rank) {
        return (seen[(set * slots + slot) * words + (rank >>> 6)] & 1L << rank) != 0;
    }
}
