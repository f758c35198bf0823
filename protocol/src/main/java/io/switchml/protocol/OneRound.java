package io.switchml.protocol;

/**
 * This project's one-round mode for small float32 all-reduces (docs/ARCHITECTURE.md section 8): a
 * software-switch extension that SwitchML's workers never see.
 *
 * <p>A one-round packet has bit 3 of byte 0 set (SwitchML leaves it unused). Its payload holds the
 * block's float32 values as raw bit patterns, and e0, e1 hold a 16-bit tag of the operation (which
 * the switch compares instead of summing the operation's descriptor in a bootstrap round). The
 * switch stages every contribution of the slot, and when the last arrives it finds the block's
 * maximum exponent over all of them, quantizes each with {@link BlockQuantizer} exactly as workers
 * do after an exponent round, and adds the integers. Its result looks like the second round's of
 * the two-round protocol: int32 sums, e0 the block exponent, e1 the unrepresentable flag, or
 * {@link #FLAG_MISMATCH} when the contributions disagree.
 *
 * <p>With bit 14 of pool_index set as well, the payload holds int32 values: the switch sums them as
 * any packet's and only compares the tags, so int32 all-reduces need no bootstrap round either
 * (their bootstrap only carried the descriptor). Such a result has e0 = 0 and e1 = 0 or
 * {@link #FLAG_MISMATCH}.
 */
public final class OneRound {
    /**
     * e1 of a result whose contributions disagree: different tags or lengths, or one-round and
     * two-round packets in the same round. Its payload is poisoned (see {@link #POISON}).
     */
    public static final int FLAG_MISMATCH = 2;
    /**
     * Element 0 of a mismatched result: no descriptor sum can equal it (they are non-negative), so
     * a two-round worker's descriptor check fails on it too.
     */
    public static final int POISON = Integer.MIN_VALUE;

    private OneRound() {
    }

    /** The 16-bit operation tag a one-round packet carries in e0 (high byte) and e1 (low byte). */
    public static int tag(AggregationPacket packet) {
        return (packet.exponent0() & 0xFF) << 8 | packet.exponent1() & 0xFF;
    }

    /** Writes the low 16 bits of {@code tag} into e0 and e1. */
    public static void writeTag(AggregationPacket packet, int tag) {
        packet.exponents((byte) (tag >>> 8), (byte) tag);
    }
}
