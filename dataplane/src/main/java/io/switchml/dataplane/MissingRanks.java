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
     * Reads the job's workers counter and bitmap checker. Not synchronized with the receive threads
     * that own them: a round may complete or open while they are read.
     */
    static MissingRanks of(InstalledJob job) {
        int workers = job.spec().workers();
        BitSet missing = new BitSet(workers);
        int incomplete = 0;
        for (int set = 0; set < 2; set++) {
            for (int slot = 0; slot < job.slots(); slot++) {
                if (job.workersCounter().complete(set, slot)) {
                    continue; // no round in progress: complete, or never opened
                }
                incomplete++;
                for (int rank = 0; rank < workers; rank++) {
                    if (!job.bitmapChecker().seen(set, slot, rank)) {
                        missing.set(rank);
                    }
                }
            }
        }
        return new MissingRanks(incomplete, missing.stream().boxed().toList());
    }
}
