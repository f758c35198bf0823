package io.switchml.dataplane;

/** What the switch program does with a packet, once it has been through the pipeline. */
enum NextStep {
    /** Dropped: invalid, dropped by the simulator, or a retransmission into an incomplete slot. */
    DROP,
    /** A new contribution that leaves the slot incomplete: kept in the registers, nothing sent. */
    CONSUME,
    /** The contribution completed the slot: the result goes to every worker of the job. */
    MULTICAST,
    /** A retransmission into a complete slot: the stored result goes back to its sender only. */
    UNICAST,
    /**
     * A leaf's job (docs/ARCHITECTURE.md section 9): the contribution completed the slot locally, or
     * a worker retransmitted into a slot still waiting for the spine; the partial result goes up to
     * the spine.
     */
    FORWARD
}
