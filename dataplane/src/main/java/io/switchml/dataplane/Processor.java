package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;

import java.util.Arrays;

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

    /**
     * Folds the packet's first {@code elements} payload elements into (set, slot); a round's first
     * packet also clears the rest, so a short packet counts as one padded with zeros.
     */
    void apply(int set, int slot, boolean first, AggregationPacket packet, int elements) {
        int[] sums = values[set][slot];
        if (first) {
            for (int i = 0; i < elements; i++) {
                sums[i] = packet.element(i);
            }
            Arrays.fill(sums, elements, sums.length, 0);
        } else {
            for (int i = 0; i < elements; i++) {
                sums[i] += packet.element(i);
            }
        }
    }

    /** Writes the first {@code elements} sums of (set, slot) into the packet's payload. */
    void writeResult(int set, int slot, AggregationPacket packet, int elements) {
        int[] sums = values[set][slot];
        for (int i = 0; i < elements; i++) {
            packet.element(i, sums[i]);
        }
    }
}
