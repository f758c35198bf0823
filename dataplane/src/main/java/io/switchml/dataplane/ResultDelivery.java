package io.switchml.dataplane;

import java.util.Map;

/**
 * How a switch delivered results, from its counters: written to job boards on its shared-memory
 * port ({@code ipc_results}), or sent as datagrams ({@code packets_sent}). Two readings tell how the
 * workers of a run reached the switch.
 */
public record ResultDelivery(long boardResults, long datagrams) {
    /** The switch's counts now. */
    public static ResultDelivery of(AggregationSwitch dataplane) {
        Map<String, Long> counters = dataplane.counters();
        return new ResultDelivery(counters.getOrDefault(SwitchCounter.IPC_RESULTS.counterName(), 0L),
                counters.getOrDefault(SwitchCounter.PACKETS_SENT.counterName(), 0L));
    }

    /**
     * What was delivered between {@code earlier} and this reading: {@code shared-memory}, {@code udp},
     * {@code shared-memory+udp}, or null when nothing was.
     */
    public String transportSince(ResultDelivery earlier) {
        boolean ipc = boardResults > earlier.boardResults;
        boolean udp = datagrams > earlier.datagrams;
        return ipc && udp ? "shared-memory+udp" : ipc ? "shared-memory" : udp ? "udp" : null;
    }
}
