package io.switchml.launch;

import io.switchml.collectives.Endpoints;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

/**
 * How {@code ring} and {@code ps} workers find each other: each worker process binds its own
 * listeners on ephemeral ports and reports them on its standard output, one line
 * {@code ENDPOINT rank=1 worker=127.0.0.1:41234 server=127.0.0.1:41236} ({@link Endpoint}); once every
 * rank has, the bench writes every rank's endpoints, in rank order, to every worker's standard input,
 * one line {@code PEERS workers=127.0.0.1:41230,... servers=127.0.0.1:41232,...} (this record). A port
 * is never closed between being chosen and being used, so no other process can take it meanwhile.
 *
 * @param workers every rank's worker endpoint, in rank order
 * @param servers {@code ps}: every rank's in-process parameter server, in rank order; empty for the ring
 */
public record PeerEndpoints(List<InetSocketAddress> workers, List<InetSocketAddress> servers) {
    static final String PREFIX = "PEERS ";

    public PeerEndpoints {
        workers = List.copyOf(workers);
        servers = List.copyOf(servers);
    }

    public String toLine() {
        return PREFIX + "workers=" + Endpoints.format(workers) + " servers=" + Endpoints.format(servers);
    }

    /** The endpoints on a {@code PEERS} line; an error for any other line. */
    public static PeerEndpoints parse(String line) {
        if (line == null || !line.startsWith(PREFIX)) {
            throw new IllegalArgumentException("expected the bench's '" + PREFIX.trim() + " ...' line, got "
                    + (line == null ? "the end of standard input" : "'" + line + "'"));
        }
        Map<String, String> f = LineFields.parse(line.substring(PREFIX.length()));
        return new PeerEndpoints(Endpoints.parse(f.get("workers")), Endpoints.parse(f.get("servers")));
    }

    /**
     * What one worker reports after binding.
     *
     * @param server its parameter server's endpoint, or null when it hosts none
     */
    public record Endpoint(int rank, InetSocketAddress worker, InetSocketAddress server) {
        static final String PREFIX = "ENDPOINT ";

        public String toLine() {
            return PREFIX + "rank=" + rank + " worker=" + Endpoints.format(List.of(worker))
                    + (server == null ? "" : " server=" + Endpoints.format(List.of(server)));
        }

        /** The endpoint on a line, or null when the line is not an endpoint report. */
        public static Endpoint parse(String line) {
            if (!line.startsWith(PREFIX)) {
                return null;
            }
            Map<String, String> f = LineFields.parse(line.substring(PREFIX.length()));
            String server = f.get("server");
            return new Endpoint(Integer.parseInt(f.get("rank")), Endpoints.parseOne(f.get("worker")),
                    server == null ? null : Endpoints.parseOne(server));
        }
    }
}
