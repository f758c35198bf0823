package io.switchml.protocol;

/**
 * The copy ("set") each slot uses next. A slot flips its set every time it is used, and the state
 * lives as long as the worker thread, so it carries over from one all-reduce to the next: reusing a
 * copy twice in a row would look like a retransmission to the switch.
 */
public final class SetAlternation {
    private final byte[] next;

    public SetAlternation(int slots) {
        this.next = new byte[slots];
    }

    /** The set for the slot's next packet; flips the slot. */
    public int take(int slot) {
        int set = next[slot];
        next[slot] = (byte) (set ^ 1);
        return set;
    }

    /** The set the slot's next packet will use, without flipping. */
    public int peek(int slot) {
        return next[slot];
    }

    public int slots() {
        return next.length;
    }
}
