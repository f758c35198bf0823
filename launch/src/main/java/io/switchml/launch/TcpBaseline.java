package io.switchml.launch;

import io.switchml.api.AllReduce;
import io.switchml.client.SwitchMLConfig;
import io.switchml.collectives.Algorithm;
import io.switchml.collectives.BytesSent;
import io.switchml.collectives.CollectiveConfig;
import io.switchml.collectives.Collectives;
import io.switchml.collectives.Compression;
import io.switchml.collectives.Listener;

import java.net.InetSocketAddress;
import java.util.Map;

/**
 * An algorithm of the collectives module, over TCP between the workers: each worker binds its listener (and,
 * for {@code ps}, its in-process parameter server's: one server per worker host) on ephemeral ports, exchanges
 * endpoints through its launcher ({@link PeerEndpoints}) and connects to its peers. A port is never closed
 * between being chosen and being used.
 */
public abstract class TcpBaseline implements AllReduceAlgorithm {
    /**
     * Where the workers listen unless {@code switchml.localAddress} names an address (the rack: the worker's
     * namespace address, so the baselines cross the same shaped links as {@code switchml}).
     */
    static final String LOCAL_HOST = "127.0.0.1";

    private final Algorithm collective;

    protected TcpBaseline(Algorithm collective) {
        this.collective = collective;
    }

    @Override
    public String id() {
        return collective.id();
    }

    @Override
    public boolean compressed() {
        return collective.compressed();
    }

    @Override
    public String describe(Compression compression) {
        return collective.compressed() ? compression.describe(collective) : null;
    }

    /** Whether each worker hosts a parameter server beside its own endpoint. */
    protected boolean hostsServer() {
        return false;
    }

    @Override
    public WorkerConnection open(Map<String, String> settings, Compression compression, WorkerConnection.PeerExchange peers) {
        // The baselines read rank, workers, local address and operation timeout of the same settings.
        SwitchMLConfig parsed = SwitchMLConfig.builder().settings(settings).build();
        int rank = parsed.rank();
        String local = parsed.localAddress();
        InetSocketAddress ephemeral = new InetSocketAddress(local.isEmpty() ? LOCAL_HOST : local, 0);
        Listener worker = Listener.bind(ephemeral);
        Listener server = null;
        try {
            server = hostsServer() ? Listener.bind(ephemeral) : null;
            PeerEndpoints all = peers.exchange(new PeerEndpoints.Endpoint(rank, worker.address(),
                    server == null ? null : server.address()));
            CollectiveConfig config = CollectiveConfig.builder().algorithm(collective.id()).rank(rank)
                    .workers(parsed.workers()).endpoints(all.workers()).servers(all.servers()).serversInWorkers(true)
                    .compression(compression).operationTimeout(parsed.operationTimeout()).build();
            AllReduce allReduce = Collectives.open(config, worker, server);
            return new WorkerConnection(allReduce, () -> new WorkerConnection.Counters(0, 0,
                    ((BytesSent) allReduce).bytesSent()), 0, 32);
        } catch (RuntimeException e) {
            worker.close();
            if (server != null) {
                server.close();
            }
            throw e;
        }
    }
}
