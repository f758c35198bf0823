package io.switchml.dataplane;

import java.util.Locale;

/** The events the switch counts, besides the drop reasons of {@link DropReason}. */
enum SwitchCounter {
    /** Every packet a switch port received (each packet of a coalesced datagram, docs/ARCHITECTURE.md section 17). */
    PACKETS_RECEIVED,
    /** UDP datagrams a port received: with UDP GRO, a coalesced run of one worker's packets counts once. */
    DATAGRAMS_RECEIVED,
    /** Packets dropped on arrival by the drop simulator. */
    INGRESS_SIMULATED_DROPS,
    /** New contributions added to a slot (retransmissions excluded). */
    CONTRIBUTIONS,
    /** Completed one-round rounds, quantized and summed by the switch (docs/ARCHITECTURE.md section 8). */
    ONE_ROUND_RESULTS,
    /** Completed rounds whose contributions disagreed (mode, tag or length): their results are poisoned. */
    MISMATCHED_ROUNDS,
    /**
     * Rounds whose only contribution was replaced by its sender's packet of another length (a cut-off
     * copy had opened them; see {@code LengthChecker}).
     */
    ROUNDS_REOPENED,
    /** Completed slots whose result was multicast to the job's workers. */
    RESULTS_SENT,
    /** Retransmissions into a complete slot, answered with the stored result to the sender only. */
    RETRANSMISSIONS_ANSWERED,
    /** Retransmissions into a slot whose round is not complete yet, dropped. */
    RETRANSMISSIONS_DROPPED,
    /** Results handed to the network (one per recipient and result, whether alone or in a run). */
    PACKETS_SENT,
    /**
     * UDP datagrams a port wrote: a run of results to one worker counts once (docs/ARCHITECTURE.md section 17), as
     * does each wake-up of the shared-memory port.
     */
    DATAGRAMS_SENT,
    /** Of those, the segmented datagrams that carried a run of several results, which the kernel cut into them. */
    SEGMENTED_DATAGRAMS_SENT,
    /**
     * Ports that stopped sending runs because the kernel refused a segmented datagram (the results of that run were
     * answered again on retransmission): 1 per such port.
     */
    UDP_SEGMENTATION_OFF,
    /** Ports whose socket the kernel refused UDP GRO (udpGro=auto; on makes it an error): 1 per such port. */
    UDP_GRO_OFF,
    /** Result datagrams dropped before sending by the drop simulator. */
    EGRESS_SIMULATED_DROPS,
    /** Result datagrams dropped because the port's send queue was full. */
    EGRESS_QUEUE_FULL_DROPS,
    /**
     * Results written to a job's board on the shared-memory port, once per result whatever the number
     * of co-located workers (docs/ARCHITECTURE.md section 11).
     */
    IPC_RESULTS,
    /** One-byte datagrams sent to wake a sleeping co-located worker thread. */
    IPC_WAKE_UPS,
    /**
     * One-byte datagrams received, which wake the port's shared-memory reader (a worker wrote to its
     * ring while it slept); on a switch without a shared-memory port they are truncated packets.
     */
    IPC_WAKE_UPS_RECEIVED,
    /**
     * Records a writer claimed in a request ring and never committed (it died mid-write), skipped once they had
     * blocked the ring for {@link io.switchml.ipc.RequestRing#UNBLOCK_AFTER_NANOS}.
     */
    IPC_RECORDS_UNBLOCKED,
    /**
     * Jobs' request rings a switch port stopped reading because their file shrank under the switch (a process of the
     * switch's user truncated it); the port goes on with the other jobs' rings and UDP.
     */
    IPC_RINGS_BROKEN,
    /** Packets from the ring whose result could not be written because their job's board file shrank. */
    IPC_BOARD_FAULTS,
    /** Partial results a leaf sent up to its spine, re-sent ones included (docs/ARCHITECTURE.md section 9). */
    PARTIALS_FORWARDED,
    /** Results from the spine that a leaf installed in a slot copy and multicast to its workers. */
    SPINE_RESULTS,
    /** Errors the network layer reported on a port (such as a failed send). */
    IO_ERRORS;

    private final String counterName = name().toLowerCase(Locale.ROOT);

    String counterName() {
        return counterName;
    }
}
