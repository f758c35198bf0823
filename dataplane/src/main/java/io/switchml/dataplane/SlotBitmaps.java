package io.switchml.dataplane;

import java.util.BitSet;
import java.util.List;

/**
 * The seen-bitmaps of one job's slot copies whose round is in progress (some but not all of its
 * workers have contributed), for inspection; see {@link AggregationSwitch#slotBitmaps}.
 *
 * @param workers    the job's workers, n
 * @param slots      the job's slots; each has two copies (sets)
 * @param inProgress the slot copies with a round in progress, in (slot, set) order
 */
public record SlotBitmaps(int workers, int slots, List<RoundInProgress> inProgress) {
    public SlotBitmaps {
        inProgress = List.copyOf(inProgress);
    }

    /**
     * One slot copy's round in progress.
     *
     * @param round     the round the copy holds (the workers' tsi), or -1 for jobs without round
     *                  numbers (SwitchML's own workers)
     * @param remaining contributions the round still waits for
     */
    public record RoundInProgress(int slot, int set, int round, int remaining, BitSet contributed) {
        public RoundInProgress {
            contributed = (BitSet) contributed.clone();
        }

        /** The ranks whose bit is set in the copy's seen-bitmap, ascending. */
        public List<Integer> contributedRanks() {
            return contributed.stream().boxed().toList();
        }

        @Override
        public BitSet contributed() {
            return (BitSet) contributed.clone();
        }
    }

    /**
     * Reads the job's workers counter, bitmap checker and round checker. Not synchronized with the
     * receive threads that own them: a round may complete or open while they are read.
     */
    static SlotBitmaps of(InstalledJob job) {
        int workers = job.spec().workers();
        List<RoundInProgress> rounds = new java.util.ArrayList<>();
        for (int slot = 0; slot < job.slots(); slot++) {
            for (int set = 0; set < 2; set++) {
                int remaining = job.workersCounter().remaining(set, slot);
                if (remaining == 0) {
                    continue; // no round in progress: complete, or never opened
                }
                BitSet seen = new BitSet(workers);
                for (int rank = 0; rank < workers; rank++) {
                    if (job.bitmapChecker().seen(set, slot, rank)) {
                        seen.set(rank);
                    }
                }
                int round = job.roundChecker() == null ? -1 : job.roundChecker().round(set, slot);
                rounds.add(new RoundInProgress(slot, set, round, remaining, seen));
            }
        }
        return new SlotBitmaps(workers, job.slots(), rounds);
    }
}
