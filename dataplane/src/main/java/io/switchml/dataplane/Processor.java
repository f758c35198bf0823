package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.kernels.PayloadKernels;

import java.util.Arrays;

/**
 * The switch program's processor: the int32 accumulators of each copy of each slot. A round's
 * first contribution overwrites them, later ones add. Additions wrap around on overflow, as Java
 * int arithmetic and the switch's 32-bit registers do; workers scale their values so that the
 * n-way sum does not overflow. The element loops are the calling port thread's {@link PayloadKernels}.
 */
final class Processor {
    /** values[set][slot][element]. */
    private final int[][][] values;
    /**
     * filled[set][slot]: how many leading sums the round holds. Beyond them a round counts as zeros;
     * tracking the length instead of clearing the rest keeps a short packet's work to its own length.
     */
    private final int[][] filled;

    Processor(int slots, int elements) {
        this.values = new int[2][slots][elements];
        this.filled = new int[2][slots];
    }

    /**
     * Folds the packet's first {@code elements} payload elements into (set, slot); a short packet
     * counts as one padded with zeros.
     */
    void apply(int set, int slot, boolean first, AggregationPacket packet, int elements, PayloadKernels kernels) {
        int[] sums = values[set][slot];
        if (first) {
            kernels.loadInts(packet.buffer(), packet.elementIndex(0), elements, sums, 0);
            filled[set][slot] = elements;
        } else {
            int held = filled[set][slot];
            if (elements > held) {
                Arrays.fill(sums, held, elements, 0); // the earlier, shorter contributions were zeros there
                filled[set][slot] = elements;
            }
            kernels.addInts(packet.buffer(), packet.elementIndex(0), elements, sums);
        }
    }

    /**
     * Makes (set, slot) hold {@code elements} sums that the caller writes into the returned
     * registers (the one-round mode computes a round's sums at once, see {@link OneRoundStaging}).
     */
    int[] overwrite(int set, int slot, int elements) {
        filled[set][slot] = elements;
        return values[set][slot];
    }

    /** Writes the first {@code elements} sums of (set, slot) into the packet's payload (zeros beyond the round's). */
    void writeResult(int set, int slot, AggregationPacket packet, int elements, PayloadKernels kernels) {
        int held = Math.min(elements, filled[set][slot]);
        kernels.storeInts(values[set][slot], 0, held, packet.buffer(), packet.elementIndex(0));
        if (held < elements) {
            kernels.zero(packet.buffer(), packet.elementIndex(held), elements - held);
        }
    }
}
