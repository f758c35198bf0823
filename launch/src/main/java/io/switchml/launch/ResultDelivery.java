package io.switchml.launch;

/**
 * How a switch delivered results, from its counters: written to job boards on its shared-memory port
 * ({@code ipc_results}), or sent as datagrams ({@code packets_sent}).
 */
public record ResultDelivery(long boardResults, long datagrams) {
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
