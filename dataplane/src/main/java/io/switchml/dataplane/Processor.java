package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;

/**
 * The switch program's processor: the int32 accumulators of each copy of each slot. A round's
 * first contribution overwrites them, later ones add. Additions wrap around on overflow, as Java
 * int arithmetic and the switch's 32-bit registers do; workers scale their values so that the
 * n-way sum does not overflow.
 */
final class Processor {
    /** values[set][slot][element]. */
    private final int[][][] values;

    Processor(int slots, int elements) {
        this.values = new int[2][slots][elements];
    }

    /** Folds the packet's payload into (set, slot). */
    void apply(int set, int slot, boolean first, AggregationPacket packet) {
        int[] sums = values[set][slot];
        if (first) {
            for (int i = 0; i < sums.length; i++) {
                sums[i] = packet.element(i);
            }
        } else {
            for (int i = 0; i < sums.length; i++) {
                sums[i] += packet.element(i);
            }
        }
    }

    /** Writes the sums of (set, slot) into the packet's payload. */
    void writeResult(int set, int slot, AggregationPacket packet) {
        int[] sums = values[set][slot];
        for (int i = 0; i < sums.length; i++) {
            packet.element(i, sums[i]);
        }
    }
}
