package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;

/**
 * The switch program's exponent registers: the maximum of e0 and, independently, the maximum of e1
 * over the contributions to each copy of each slot. e0 carries the block exponent; e1 carries the
 * workers' "unrepresentable block" flag, whose maximum tells every worker that one of them raised it.
 */
final class Exponents {
    private final int slots;
    /** e0Max[set * slots + slot], e1Max likewise; signed 8-bit, as on the wire. */
    private final byte[] e0Max;
    private final byte[] e1Max;

    Exponents(int slots) {
        this.slots = slots;
        this.e0Max = new byte[2 * slots];
        this.e1Max = new byte[2 * slots];
    }

    /** Takes the packet's exponents: as they are for a round's first packet, else the maxima. */
    void apply(int set, int slot, boolean first, AggregationPacket packet) {
        int i = set * slots + slot;
        int e0 = packet.exponent0();
        int e1 = packet.exponent1();
        if (first) {
            e0Max[i] = (byte) e0;
            e1Max[i] = (byte) e1;
        } else {
            e0Max[i] = (byte) Math.max(e0Max[i], e0);
            e1Max[i] = (byte) Math.max(e1Max[i], e1);
        }
    }

    /** Sets the registers of (set, slot) to a result computed elsewhere (the one-round mode's). */
    void set(int set, int slot, int e0, int e1) {
        int i = set * slots + slot;
        e0Max[i] = (byte) e0;
        e1Max[i] = (byte) e1;
    }

    /** Writes the maxima of (set, slot) into the packet's exponent fields. */
    void writeResult(int set, int slot, AggregationPacket packet) {
        int i = set * slots + slot;
        packet.exponents(e0Max[i], e1Max[i]);
    }
}
