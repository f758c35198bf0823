package io.switchml.controller;

import io.switchml.dataplane.UplinkSpec;

/**
 * A leaf's place in the spine's job for one of its jobs (docs/ARCHITECTURE.md section 9): what the
 * spine's controller answered to the leaf's join, and the leaf's watch there.
 */
final class SpineMembership {
    /** The spine job's number and run id, as a worker's JoinResponse has them. */
    final int jobNumber;
    final long jobId;
    /** The window the spine granted: the local job uses it too, so that slots line up at both levels. */
    final int slotsPerThread;
    /** Why the spine's window is smaller than asked; empty when it is not. */
    final String admission;
    final UplinkSpec uplink;
    /** Cancels the leaf's watch at the spine: the spine then takes this leaf for dead and aborts its job. */
    private final Runnable cancelWatch;
    /** Set once the leaf left the spine's job or dropped out of it: the end of its watch is then expected. */
    private volatile boolean over;

    SpineMembership(int jobNumber, long jobId, int slotsPerThread, String admission, UplinkSpec uplink,
                    Runnable cancelWatch) {
        this.jobNumber = jobNumber;
        this.jobId = jobId;
        this.slotsPerThread = slotsPerThread;
        this.admission = admission;
        this.uplink = uplink;
        this.cancelWatch = cancelWatch;
    }

    boolean over() {
        return over;
    }

    /** The leaf is leaving the spine's job: the spine ends the watch, which is no loss. */
    void leaving() {
        over = true;
    }

    /** The leaf drops out of the spine's job (its local job ended otherwise): its watch is cancelled. */
    void drop() {
        over = true;
        cancelWatch.run();
    }
}
