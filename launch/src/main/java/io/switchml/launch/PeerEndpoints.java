package io.switchml.launch;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * How {@code ring} and {@code ps} workers find each other: each worker process binds its own
 * listeners on ephemeral ports and reports them on its standard output, one line
 * {@code ENDPOINT {"rank":1,"worker":"127.0.0.1:41234","server":"127.0.0.1:41236"}} ({@link Endpoint}); once every
 * rank has, the bench writes every rank's endpoints, in rank order, to every worker's standard input,
 * one line {@code PEERS {"workers":["127.0.0.1:41230",...],"servers":[...]}} (this record), both {@link ReportLine}s. A port
 * is never closed between being chosen and being used, so no other process can take it meanwhile.
 *
 * @param workers every rank's worker endpoint, in rank order
 * @param servers {@code ps}: every rank's in-process parameter server, in rank order; empty for the ring
 */
public record PeerEndpoints(List<InetSocketAddress> workers, List<InetSocketAddress> servers) {
    static final String KIND = "PEERS";

    public PeerEndpoints {
        workers = List.copyOf(workers);
        servers = List.copyOf(servers);
    }

    public String toLine() {
        return ReportLine.write(KIND, this);
    }

    /** The endpoints on a {@code PEERS} line; an error for any other line. */
    public static PeerEndpoints parse(String line) {
        PeerEndpoints peers = ReportLine.read(line, KIND, PeerEndpoints.class);
        if (peers == null) {
            throw new IllegalArgumentException("expected the bench's '" + KIND + " ...' line, got "
                    + (line == null ? "the end of standard input" : "'" + line + "'"));
        }
        return peers;
    }

    /**
     * What one worker reports after binding.
     *
     * @param server its parameter server's endpoint, or null when it hosts none
     */
    public record Endpoint(int rank, InetSocketAddress worker, InetSocketAddress server) {
        static final String KIND = "ENDPOINT";

        public String toLine() {
            return ReportLine.write(KIND, this);
        }

        /** The endpoint on a line, or null when the line is not an endpoint report. */
        public static Endpoint parse(String line) {
            return ReportLine.read(line, KIND, Endpoint.class);
        }
    }
}
