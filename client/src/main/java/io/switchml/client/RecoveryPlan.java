package io.switchml.client;

import io.switchml.api.SwitchMLException;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;

/**
 * What the workers agree on at a failover, and what follows from it. Both agreements are int32
 * sums through the new switch (or ring), where each rank writes only its own bits, so the sum is
 * every rank's contribution side by side, exact and the same on every worker:
 *
 * <ol>
 * <li><b>Progress</b>: per rank, its oldest unfinished all-reduce and its last submitted one. The
 * all-reduces from the oldest unfinished anywhere ({@code first}) to the last one every rank has
 * submitted ({@code last}) may hold results somewhere; later ones cannot (the switch needs every
 * rank's packet) and simply run again on the new switch.</li>
 * <li><b>Held blocks</b>: per all-reduce in [first, last] and block, a bitmap of the ranks that hold
 * its result (ranks that finished the all-reduce hold every block and add nothing).</li>
 * </ol>
 *
 * Then each block is kept (every rank holds it), redone from every rank's input (nobody holds it,
 * so nobody's input was overwritten), or copied from the lowest rank that holds it and still has
 * the all-reduce unfinished (its output, as int32 bits, summed with the others' zeros).
 */
final class RecoveryPlan {
    /** Ints per rank in the progress agreement: two longs, high and low halves. */
    private static final int PROGRESS_INTS = 4;

    /** The repair of one all-reduce. {@code copyDonors[i]} holds the result of block {@code copy[i]}. */
    record Repair(long sequence, int[] redo, int[] copy, int[] copyDonors, int kept, BitSet finishedRanks) {
        boolean finishedOn(int rank) {
            return finishedRanks.get(rank);
        }
    }

    /** Every rank's progress, as agreed. */
    record Progress(long[] oldestUnfinished, long[] lastSubmitted) {
        /** The oldest all-reduce unfinished on some rank. */
        long first() {
            long min = Long.MAX_VALUE;
            for (long s : oldestUnfinished) {
                min = Math.min(min, s);
            }
            return min;
        }

        /** The last all-reduce every rank has submitted. */
        long last() {
            long min = Long.MAX_VALUE;
            for (long s : lastSubmitted) {
                min = Math.min(min, s);
            }
            return min;
        }

        BitSet finishedRanks(long sequence) {
            BitSet finished = new BitSet();
            for (int r = 0; r < oldestUnfinished.length; r++) {
                if (oldestUnfinished[r] > sequence) {
                    finished.set(r);
                }
            }
            return finished;
        }
    }

    private RecoveryPlan() {
    }

    static int[] progressContribution(int rank, int workers, long oldestUnfinished, long lastSubmitted) {
        int[] v = new int[PROGRESS_INTS * workers];
        int at = PROGRESS_INTS * rank;
        v[at] = (int) (oldestUnfinished >>> 32);
        v[at + 1] = (int) oldestUnfinished;
        v[at + 2] = (int) (lastSubmitted >>> 32);
        v[at + 3] = (int) lastSubmitted;
        return v;
    }

    static Progress progress(int[] summed, int workers) {
        long[] oldest = new long[workers];
        long[] last = new long[workers];
        for (int r = 0; r < workers; r++) {
            int at = PROGRESS_INTS * r;
            oldest[r] = ((long) summed[at] << 32) | (summed[at + 1] & 0xFFFFFFFFL);
            last[r] = ((long) summed[at + 2] << 32) | (summed[at + 3] & 0xFFFFFFFFL);
        }
        return new Progress(oldest, last);
    }

    private static int words(int workers) {
        return (workers + 31) / 32;
    }

    /**
     * This rank's bits of the held-blocks agreement: {@code blocks[i]} blocks for all-reduce
     * first + i; {@code held} by index i, only for the all-reduces unfinished here.
     */
    static int[] heldContribution(int rank, int workers, int[] blocks, Map<Integer, BitSet> held) {
        int w = words(workers);
        int[] offsets = offsets(blocks, w);
        int[] v = new int[offsets[blocks.length]];
        for (Map.Entry<Integer, BitSet> e : held.entrySet()) {
            int base = offsets[e.getKey()];
            BitSet h = e.getValue();
            for (int b = h.nextSetBit(0); b >= 0; b = h.nextSetBit(b + 1)) {
                v[base + b * w + rank / 32] |= 1 << (rank % 32);
            }
        }
        return v;
    }

    private static int[] offsets(int[] blocks, int words) {
        int[] offsets = new int[blocks.length + 1];
        for (int i = 0; i < blocks.length; i++) {
            offsets[i + 1] = Math.addExact(offsets[i], Math.multiplyExact(blocks[i], words));
        }
        return offsets;
    }

    /** The repairs of all-reduces first .. first + blocks.length - 1, from the agreed bits. */
    static List<Repair> repairs(Progress progress, long first, int[] blocks, int[] summedHeld) {
        int workers = progress.oldestUnfinished().length;
        int w = words(workers);
        int[] offsets = offsets(blocks, w);
        List<Repair> repairs = new ArrayList<>();
        for (int i = 0; i < blocks.length; i++) {
            long sequence = first + i;
            BitSet finished = progress.finishedRanks(sequence);
            IntList redo = new IntList();
            IntList copy = new IntList();
            IntList donors = new IntList();
            int kept = 0;
            for (int b = 0; b < blocks[i]; b++) {
                BitSet holders = (BitSet) finished.clone();
                int base = offsets[i] + b * w;
                for (int word = 0; word < w; word++) {
                    int bits = summedHeld[base + word];
                    for (int bit = 0; bit < 32; bit++) {
                        if ((bits & (1 << bit)) != 0) {
                            holders.set(word * 32 + bit);
                        }
                    }
                }
                if (holders.cardinality() == workers) {
                    kept++;
                } else if (holders.isEmpty()) {
                    redo.add(b);
                } else {
                    BitSet donorsOf = (BitSet) holders.clone();
                    donorsOf.andNot(finished);
                    if (donorsOf.isEmpty()) {
                        throw new SwitchMLException("cannot fail over: the result of block " + b + " of all-reduce #"
                                + sequence + " reached only rank(s) " + holders + ", which already returned that all-reduce"
                                + " to the application, and not rank(s) that still wait for it; it can be neither copied"
                                + " nor redone (their inputs may have been overwritten)");
                    }
                    copy.add(b);
                    donors.add(donorsOf.nextSetBit(0));
                }
            }
            repairs.add(new Repair(sequence, redo.toArray(), copy.toArray(), donors.toArray(), kept, finished));
        }
        return repairs;
    }

    /** A growable int array, to avoid boxing a block list per all-reduce. */
    private static final class IntList {
        private int[] values = new int[16];
        private int size;

        void add(int v) {
            if (size == values.length) {
                values = java.util.Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }

        int[] toArray() {
            return java.util.Arrays.copyOf(values, size);
        }
    }
}
