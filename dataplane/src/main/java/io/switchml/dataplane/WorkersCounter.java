package io.switchml.dataplane;

/**
 * The switch program's workers counter: how many workers a round of each copy of each slot still
 * waits for. The first packet of a round finds 0 and reloads it to n - 1; every later new
 * contribution counts down; 0 again means the round is complete and its result may be sent.
 */
final class WorkersCounter {
    private final int slots;
    private final int workers;
    /** remaining[set * slots + slot]. */
    private final int[] remaining;

    WorkersCounter(int slots, int workers) {
        this.slots = slots;
        this.workers = workers;
        this.remaining = new int[2 * slots];
    }

    /**
     * Counts one new (not retransmitted) contribution to (set, slot).
     *
     * @return true when it is the first contribution of a round, which overwrites the old values
     */
    boolean count(int set, int slot) {
        int i = set * slots + slot;
        int left = remaining[i];
        if (left == 0) {
            remaining[i] = workers - 1;
            return true;
        }
        remaining[i] = left - 1;
        return false;
    }

    /** True when no worker is missing in the round of (set, slot): its result is complete. */
    boolean complete(int set, int slot) {
        return remaining[set * slots + slot] == 0;
    }

    /** Workers the round of (set, slot) still waits for; for inspection and tests. */
    int remaining(int set, int slot) {
        return remaining[set * slots + slot];
    }
}
