package io.switchml.protocol;

/**
 * Which ranks each leaf of a two-level hierarchy serves (docs/ARCHITECTURE.md section 9): leaf I of
 * L serves the contiguous ranks {@code [floor(I n / L), floor((I+1) n / L))} of a job of n workers.
 * Pure functions, shared by the leaves' controllers and by whatever places workers at their leaf.
 */
public final class LeafRanks {
    private LeafRanks() {
    }

    /** The first rank leaf {@code leaf} serves; {@code firstRank(leaves, ...)} is n. */
    public static int firstRank(int leaf, int leaves, int workers) {
        return (int) ((long) leaf * workers / leaves);
    }

    /** How many ranks leaf {@code leaf} serves. */
    public static int rankCount(int leaf, int leaves, int workers) {
        return firstRank(leaf + 1, leaves, workers) - firstRank(leaf, leaves, workers);
    }

    /** The leaf that serves {@code rank}, 0 <= rank < workers. */
    public static int leafOf(int rank, int leaves, int workers) {
        if (rank < 0 || rank >= workers) {
            throw new IllegalArgumentException("rank " + rank + " outside 0.." + (workers - 1));
        }
        int leaf = (int) (((long) rank * leaves + leaves - 1) / workers); // a first guess; settled below
        while (leaf + 1 < leaves && firstRank(leaf + 1, leaves, workers) <= rank) {
            leaf++;
        }
        while (leaf > 0 && firstRank(leaf, leaves, workers) > rank) {
            leaf--;
        }
        return leaf;
    }

    /** The ranks leaf {@code leaf} serves, as text ("4..7"). */
    public static String describe(int leaf, int leaves, int workers) {
        return firstRank(leaf, leaves, workers) + ".." + (firstRank(leaf + 1, leaves, workers) - 1);
    }
}
