package io.switchml.launch;

import io.switchml.api.AllReduce;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLConnection;
import io.switchml.client.WorkerStatistics;
import io.switchml.collectives.BytesSent;
import io.switchml.collectives.CollectiveConfig;
import io.switchml.collectives.Collectives;
import io.switchml.collectives.Compression;
import io.switchml.collectives.Listener;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Supplier;

/**
 * How a worker process started by a launcher ({@link BenchRunner}, the training launcher) opens its
 * all-reduce by algorithm name: {@code switchml} joins the job at the switch named in its
 * {@code switchml.*} configuration, with the job secret its launcher gave it ({@link JobSecret}); {@code ring}, {@code ps}, {@code topk} and {@code qsgd} bind their
 * ports, exchange endpoints with the launcher ({@link PeerEndpoints}) and connect to their peers.
 *
 * @param allReduce the open all-reduce
 * @param counters  its packet counters (packets zero for the TCP baselines, which never resend themselves) and bytes sent
 * @param elementsPerPacket {@code switchml}: the packet size, the unit of its block scaling; 0 otherwise
 * @param laneBits  {@code switchml}: bits per float32 value on the wire (32, or 16: two values per element); 32 otherwise
 */
public record WorkerConnection(AllReduce allReduce, Supplier<Counters> counters, int elementsPerPacket, int laneBits)
        implements AutoCloseable {
    /** Packets retransmitted and sent so far, and bytes put on the wire ({@code switchml}: UDP payload; the others: TCP). */
    public record Counters(long retransmissions, long packets, long bytesSent) {
    }

    /** How a {@code ring} or {@code ps} worker tells the launcher its endpoints and learns every rank's. */
    @FunctionalInterface
    public interface PeerExchange {
        PeerEndpoints exchange(PeerEndpoints.Endpoint mine);

        /** Through standard output (this rank's endpoints) and standard input (every rank's), as the launchers expect. */
        PeerExchange STANDARD_STREAMS = WorkerConnection::exchangeThroughStandardStreams;
    }

    /**
     * Where {@code ring} and {@code ps} workers listen unless {@code switchml.localAddress} names an address (the
     * rack: the worker's namespace address, so the baselines cross the same shaped links as {@code switchml}).
     */
    static final String LOCAL_HOST = "127.0.0.1";

    /** Opens {@code algorithm} for the worker configured by {@code config} ({@code switchml.rank}, {@code .workers}, ...). */
    public static WorkerConnection open(AllReduceAlgorithm algorithm, Map<String, String> config, PeerExchange peers) {
        return open(algorithm, config, Compression.DEFAULTS, peers);
    }

    /** The same, with the settings of {@code topk} and {@code qsgd}. */
    public static WorkerConnection open(AllReduceAlgorithm algorithm, Map<String, String> config, Compression compression,
                                        PeerExchange peers) {
        return algorithm.needsSwitch() ? openSwitchMl(config) : openCollective(algorithm, config, compression, peers);
    }

    private static WorkerConnection openSwitchMl(Map<String, String> settings) {
        SwitchMLConfig config = parse(JobSecret.withLauncherSecret(settings, System.getenv()));
        SwitchMLConnection context = SwitchMLConnection.connect(config);
        return new WorkerConnection(context, () -> {
            WorkerStatistics.Snapshot s = context.statistics().snapshot();
            return new Counters(s.retransmissions(), s.packetsSent(), s.bytesSent());
        }, context.config().elementsPerPacket(), context.config().lanes());
    }

    /**
     * Binds this rank's listener (and, for {@code ps}, its in-process parameter server's: one server per worker
     * host) on ephemeral ports, exchanges endpoints, and connects.
     */
    private static WorkerConnection openCollective(AllReduceAlgorithm algorithm, Map<String, String> settings,
                                                   Compression compression, PeerExchange peers) {
        // The baselines read rank, workers, local address and operation timeout of the same settings.
        SwitchMLConfig parsed = parse(settings);
        int rank = parsed.rank();
        int workers = parsed.workers();
        boolean ps = algorithm == AllReduceAlgorithm.PS;
        String local = parsed.localAddress();
        InetSocketAddress ephemeral = new InetSocketAddress(local.isEmpty() ? LOCAL_HOST : local, 0);
        Listener worker = Listener.bind(ephemeral);
        Listener server = null;
        try {
            server = ps ? Listener.bind(ephemeral) : null;
            PeerEndpoints all = peers.exchange(new PeerEndpoints.Endpoint(rank, worker.address(),
                    server == null ? null : server.address()));
            CollectiveConfig.Builder config = CollectiveConfig.builder().algorithm(algorithm.id()).rank(rank)
                    .workers(workers).endpoints(all.workers()).servers(all.servers()).serversInWorkers(true)
                    .compression(compression).operationTimeout(parsed.operationTimeout());
            AllReduce allReduce = Collectives.open(config.build(), worker, server);
            return new WorkerConnection(allReduce, () -> new Counters(0, 0, ((BytesSent) allReduce).bytesSent()), 0, 32);
        } catch (RuntimeException e) {
            worker.close();
            if (server != null) {
                server.close();
            }
            throw e;
        }
    }

    /** The worker settings, validated by the one parser of settings. */
    private static SwitchMLConfig parse(Map<String, String> settings) {
        return SwitchMLConfig.builder().settings(settings).build();
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
