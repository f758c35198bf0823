package io.switchml.client;

import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a stopped session hands to a failover: per all-reduce still unfinished on some worker thread
 * (by its number), the blocks whose results this worker already holds; all-reduces not listed are
 * finished here. The next switch redoes only the other blocks (docs/ARCHITECTURE.md, section 6).
 */
final class HeldBlocks {
    private HeldBlocks() {
    }

    /** From every worker thread's snapshot, with {@code k} elements per block. */
    static Map<Long, BitSet> of(List<LaneEngine.Snapshot> snapshots, int k) {
        Map<Long, BitSet> held = new HashMap<>();
        for (LaneEngine.Snapshot s : snapshots) {
            if (s.running() != null) {
                BitSet blocks = blocksOf(held, s.running(), k);
                for (int b = s.runningHeld().nextSetBit(0); b >= 0; b = s.runningHeld().nextSetBit(b + 1)) {
                    blocks.set(s.running().from / k + b);
                }
            }
            for (LaneTask queued : s.queued()) {
                blocksOf(held, queued, k);
            }
        }
        return held;
    }

    /**
     * The held blocks of {@code task}'s all-reduce, created as "all held" (the shares of the worker
     * threads that finished it), with {@code task}'s own share cleared.
     */
    private static BitSet blocksOf(Map<Long, BitSet> held, LaneTask task, int k) {
        Operation<?> op = task.operation;
        BitSet blocks = held.computeIfAbsent(op.sequence, s -> {
            BitSet all = new BitSet();
            all.set(0, (op.length + k - 1) / k);
            return all;
        });
        blocks.clear(task.from / k, (task.to + k - 1) / k);
        return blocks;
    }
}
