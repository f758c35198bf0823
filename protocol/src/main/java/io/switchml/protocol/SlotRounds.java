package io.switchml.protocol;

/**
 * How many times each slot has been used: the slot's next round number. It lives as long as the
 * worker thread, so it carries over from one all-reduce to the next, and every worker of a job
 * counts the same rounds because they run the same all-reduces.
 *
 * <p>The round's parity is the copy ("set") the packet uses, so a slot alternates its copies:
 * reusing a copy twice in a row would look like a retransmission to the switch. This project's
 * workers also send the round number as the tsi, which lets the switch recognise a late duplicate
 * of an old round (see the dataplane's round checker): SwitchML's switch would take it for a new
 * contribution.
 */
public final class SlotRounds {
    private final int[] next;

    public SlotRounds(int slots) {
        this.next = new int[slots];
    }

    /** The round of the slot's next packet; advances the slot. */
    public int take(int slot) {
        return next[slot]++;
    }

    /** The round the slot's next packet will have, without advancing. */
    public int peek(int slot) {
        return next[slot];
    }

    /** The copy a round uses: 0 or 1. */
    public static int setOf(int round) {
        return round & 1;
    }

    public int slots() {
        return next.length;
    }
}
