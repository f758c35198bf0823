package io.switchml.control;

/**
 * The counters a worker keeps, declared once: each is a {@code LongAdder} in the client's
 * {@code WorkerStatistics}, travels in the rank's transport report to its switch
 * ({@code WorkerTransport.counters}, keyed by {@link #id()}), and is exported by the switch's metrics
 * endpoint as {@code switchml_rank_<id>_total} with {@link #help()}. Adding a counter is one constant
 * here and its increment where the event happens (docs/ARCHITECTURE.md section 1's map).
 */
public enum WorkerCounter {
    PACKETS_SENT("packets_sent", "Packets a rank's worker threads sent, retransmissions included."),
    SENT_BYTES("sent_bytes", "Bytes of the packets a rank sent, headers and retransmissions included."),
    PACKETS_RECEIVED("packets_received", "Results a rank's worker threads received, duplicates included."),
    RECEIVED_BYTES("received_bytes", "Bytes of the results a rank received."),
    RETRANSMISSIONS("retransmissions", "Packets a rank sent again, found lost or as timeout probes."),
    RETRANSMISSION_TIMEOUTS("retransmission_timeouts", "Times no result reached a rank within its retransmission timeout."),
    DUPLICATE_RESULTS("duplicate_results", "Results a rank ignored as duplicates or leftovers of earlier all-reduces."),
    MALFORMED_RESULTS("malformed_results", "Datagrams a rank received that were not well-formed results of its job."),
    FORGED_RESULTS("forged_results", "Results of a job with authenticated packets whose tag was wrong (forged, or altered"
            + " on the way); never read."),
    ALL_REDUCES("all_reduces", "All-reduces a rank finished, successfully or not."),
    ALL_REDUCE_TIMEOUTS("all_reduce_timeouts", "All-reduces of a rank that failed by exceeding the operation timeout."),
    INJECTED_DROPS("injected_drops", "Datagrams a rank's fault injection dropped (tests only)."),
    INJECTED_DUPLICATES("injected_duplicates", "Datagrams a rank's fault injection duplicated (tests only)."),
    INJECTED_DELAYS("injected_delays", "Datagrams a rank's fault injection delayed (tests only)."),
    FAILOVERS("failovers", "Times a rank's job moved to another switch or to the fallback ring."),
    BLOCKS_KEPT("failover_blocks_kept", "At failovers: blocks every worker already held, not sent again."),
    BLOCKS_REDONE("failover_blocks_redone", "At failovers: blocks no worker held, aggregated again."),
    BLOCKS_COPIED("failover_blocks_copied", "At failovers: blocks some workers held, copied from the lowest rank that did."),
    WINDOW_DELAY_DECREASES("window_delay_decreases", "Times a rank's congestion window shrank on a standing queue."),
    WINDOW_LOSS_DECREASES("window_loss_decreases", "Times a rank's congestion window halved on a loss with evidence of congestion."),
    RANDOM_LOSSES("random_losses", "Losses a rank's congestion control took for random, leaving its window alone."),
    IPC_RING_FULL("ipc_ring_full", "Packets that waited for room in the shared-memory port's full request ring."),
    ZERO_BLOCKS_SKIPPED("zero_blocks_skipped", "Float32 blocks zero at every worker that a rank skipped instead of sending"
            + " their values."),
    SEGMENTED_DATAGRAMS("segmented_datagrams", "UDP datagrams that carried a run of several packets, which the kernel"
            + " cut into those packets (UDP GSO): one send for the run."),
    DATAGRAMS_RECEIVED("datagrams_received", "UDP datagrams of results a rank's worker threads received, a run"
            + " coalesced by UDP GRO counting once."),
    DATAGRAMS_SENT("datagrams_sent", "UDP datagrams a rank's worker threads wrote to the switch, a segmented one counting"
            + " once."),
    UDP_SEGMENTATION_OFF("udp_segmentation_off", "Worker threads that stopped sending runs because the kernel refused a"
            + " segmented datagram (their packets were resent one datagram each)."),
    UDP_GRO_OFF("udp_gro_off", "Worker threads whose socket the kernel refused UDP GRO (udpGro=auto): one datagram per"
            + " result.");

    private final String id;
    private final String help;

    WorkerCounter(String id, String help) {
        this.id = id;
        this.help = help;
    }

    /** Its key in the transport report and, after {@code switchml_rank_}, its metric's name. */
    public String id() {
        return id;
    }

    /** What it counts, as the metrics endpoint says it. */
    public String help() {
        return help;
    }
}
