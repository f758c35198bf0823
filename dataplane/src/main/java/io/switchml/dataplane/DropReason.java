package io.switchml.dataplane;

import java.util.Locale;

/** Why the switch refused a packet without applying it; each reason has its own counter. */
enum DropReason {
    /**
     * Shorter than header and exponents, not whole elements, or (in a SwitchML job, whose parser
     * takes a packet only at its size code's length) shorter than its size code says.
     */
    TRUNCATED,
    /** Longer than its size code says. */
    TOO_LONG,
    /** msg_type is not an aggregation packet. */
    WRONG_MSG_TYPE,
    /**
     * A bit the protocol leaves unused is set: pool_index bit 14, or header bit 3 (the one-round
     * flag) in a job without the one-round mode.
     */
    UNUSED_BITS,
    /** A one-round packet carries more values than the job stages per contribution. */
    ONE_ROUND_TOO_LONG,
    /** The source address and port are in no installed job's worker table. */
    UNKNOWN_SOURCE,
    /** The packet's job number names no installed job (not checked for SwitchML's workers, see {@code WorkerTable}). */
    UNKNOWN_JOB,
    /** The packet's job number is installed but is not its source's job. */
    JOB_MISMATCH,
    /** The packet's size code is not its job's. */
    SIZE_MISMATCH,
    /** The slot is not below the job's slot count. */
    SLOT_OUT_OF_RANGE,
    /** The slot belongs to another switch port (whose receive thread owns its registers). */
    WRONG_PORT,
    /**
     * A two-round contribution of another length than the round's others (see {@code LengthChecker}):
     * cut off or foreign, never summed.
     */
    LENGTH_MISMATCH,
    /** The packet's round (its tsi) is over for its slot: a late duplicate (see {@code RoundChecker}). */
    STALE_ROUND,
    /**
     * A spine's result for a slot copy of a leaf's job that does not wait for that round: a late or
     * duplicated result (docs/ARCHITECTURE.md section 9).
     */
    STALE_SPINE_RESULT,
    /**
     * A record on the shared-memory port in the name of a worker that does not read its results there
     * (it joined over UDP, or its job has no board): a forged identity (docs/security.md).
     */
    NOT_A_RING_WORKER,
    /**
     * A packet of a job with authenticated packets whose tag is not the one the job's key gives it from its
     * sender: forged, altered or cut on the way (docs/ARCHITECTURE.md section 19). Never added.
     */
    BAD_TAG;

    private final String counterName = "drops_" + name().toLowerCase(Locale.ROOT);

    String counterName() {
        return counterName;
    }
}
