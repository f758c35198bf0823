package io.switchml.launch;

import io.switchml.api.AllReduce;
import io.switchml.collectives.Compression;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The all-reduce a worker process started by a launcher ({@link BenchRunner}, the training launcher) opened
 * through its {@link AllReduceAlgorithm}: {@code switchml} joins the job at the switch named in its
 * {@code switchml.*} configuration ({@link SwitchMlAlgorithm}); the TCP baselines bind their ports, exchange
 * endpoints with the launcher ({@link PeerEndpoints}) and connect to their peers ({@link TcpBaseline}).
 *
 * @param allReduce the open all-reduce
 * @param counters  its packet counters (packets zero for the TCP baselines, which never resend themselves) and bytes sent
 * @param elementsPerPacket {@code switchml}: the packet size, the unit of its block scaling; 0 otherwise
 * @param laneBits  {@code switchml}: bits per float32 value on the wire (32, or 16: two values per element); 32 otherwise
 */
public record WorkerConnection(AllReduce allReduce, Supplier<Counters> counters, int elementsPerPacket, int laneBits)
        implements AutoCloseable {
    /**
     * Packets retransmitted and sent so far, and bytes put on the wire ({@code switchml}: UDP payload; the others: TCP);
     * over UDP also the datagrams sent, the results received and the datagrams they came in (a run sent or received as
     * one segmented or coalesced datagram counts once, docs/ARCHITECTURE.md section 17), -1 where not known.
     */
    public record Counters(long retransmissions, long packets, long bytesSent, long datagramsSent, long packetsReceived,
                           long datagramsReceived) {
        /** Without datagram counts (the TCP baselines, a host's ranks that do not run its agent). */
        public Counters(long retransmissions, long packets, long bytesSent) {
            this(retransmissions, packets, bytesSent, -1, -1, -1);
        }
    }

    /** How a {@code ring} or {@code ps} worker tells the launcher its endpoints and learns every rank's. */
    @FunctionalInterface
    public interface PeerExchange {
        PeerEndpoints exchange(PeerEndpoints.Endpoint mine);

        /** Through standard output (this rank's endpoints) and standard input (every rank's), as the launchers expect. */
        PeerExchange STANDARD_STREAMS = WorkerConnection::exchangeThroughStandardStreams;
    }

    /** Opens {@code algorithm} for the worker configured by {@code config} ({@code switchml.rank}, {@code .workers}, ...). */
    public static WorkerConnection open(AllReduceAlgorithm algorithm, Map<String, String> config, PeerExchange peers) {
        return algorithm.open(config, Compression.DEFAULTS, peers);
    }

    /** The same, with the settings of {@code topk} and {@code qsgd}. */
    public static WorkerConnection open(AllReduceAlgorithm algorithm, Map<String, String> config, Compression compression,
                                        PeerExchange peers) {
        return algorithm.open(config, compression, peers);
    }

    private static PeerEndpoints exchangeThroughStandardStreams(PeerEndpoints.Endpoint mine) {
        System.out.println(mine.toLine());
        System.out.flush();
        try {
            // Not closed: closing it would close System.in, and the launcher closes its end after this one line.
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            return PeerEndpoints.parse(in.readLine());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the peers' endpoints from standard input: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        allReduce.close();
    }
}
