package io.switchml.dataplane;

import java.util.BitSet;
import java.util.List;

/**
 * What the switch is waiting for in one job: the slot copies whose round is in progress (some but
 * not all of the job's workers have contributed) and the ranks missing from at least one of them.
 * A diagnosis for timeouts; see {@link AggregationSwitch#missingRanks}.
 *
 * @param incompleteSlots slot copies (slot, set) with a round in progress
 * @param ranks           ranks without a contribution in at least one of them, ascending
 */
public record MissingRanks(int incompleteSlots, List<Integer> ranks) {
    public MissingRanks {
        ranks = List.copyOf(ranks);
    }

    /**
     * Reads the job's registers (see {@link SlotBitmaps#of}); not synchronized with the receive
     * threads that own them.
     */
    static MissingRanks of(InstalledJob job) {
        return of(SlotBitmaps.of(job));
    }

    /** The ranks without a bit in at least one of the copies in progress. */
    public static MissingRanks of(SlotBitmaps bitmaps) {
        BitSet missing = new BitSet(bitmaps.workers());
        for (SlotBitmaps.RoundInProgress round : bitmaps.inProgress()) {
            BitSet absent = round.contributed();
            absent.flip(0, bitmaps.workers());
            missing.or(absent);
        }
        return new MissingRanks(bitmaps.inProgress().size(), missing.stream().boxed().toList());
    }
}
