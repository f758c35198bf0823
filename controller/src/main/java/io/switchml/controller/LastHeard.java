package io.switchml.controller;

import java.util.OptionalInt;

/**
 * When a job (or SwitchML session) was last heard of: a call of one of its ranks, or packets on the
 * switch, seen as a change of the dataplane's activity number for its job. What the idle check reads:
 * a job silent for long has no live rank and is reclaimed. Used under its owner's lock.
 */
final class LastHeard {
    private long atNanos = System.nanoTime();
    private int activity;

    /** A rank was heard at {@code now} (a call, a registration, the installation). */
    void heard(long now) {
        atNanos = now;
    }

    /**
     * Takes the switch's activity number at {@code now} (empty: not on the switch) and says whether
     * nothing was heard for more than {@code idleNanos}.
     */
    boolean silentFor(OptionalInt switchActivity, long now, long idleNanos) {
        if (switchActivity.isPresent() && switchActivity.getAsInt() != activity) {
            activity = switchActivity.getAsInt();
            atNanos = now;
            return false;
        }
        return now - atNanos > idleNanos;
    }
}
