package io.switchml.collectives;

import io.switchml.api.AllReduce;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * A job of n workers as threads of this JVM on 127.0.0.1, every endpoint bound on an ephemeral port
 * before anyone connects; for {@code ps}, its servers inside the workers or as separate
 * {@link ParameterServer}s.
 */
final class LocalJob implements AutoCloseable {
    /** How a test job is laid out. */
    record Layout(String name, Algorithm algorithm, int servers, boolean serversInWorkers, int segmentBytes) {
        static Layout ring(int segmentBytes) {
            return new Layout("ring/" + segmentBytes + "B", Algorithm.RING, 0, false, segmentBytes);
        }

        /** servers <= 0 means one per worker. */
        static Layout ps(int servers, boolean inWorkers, int segmentBytes) {
            return new Layout("ps/" + (servers <= 0 ? "n" : servers) + (inWorkers ? "-in-workers/" : "-dedicated/")
                    + segmentBytes + "B", Algorithm.PARAMETER_SERVER, servers, inWorkers, segmentBytes);
        }

        /** {@code topk} or {@code qsgd}: the ring's transport, no servers. */
        static Layout compressed(Algorithm algorithm) {
            return new Layout(algorithm.id(), algorithm, 0, false, CollectiveConfig.DEFAULT_SEGMENT_BYTES);
        }

        int serverCount(int workers) {
            return algorithm != Algorithm.PARAMETER_SERVER ? 0 : servers <= 0 ? workers : servers;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    final List<CollectiveConfig> configs = new ArrayList<>();
    /** Each rank's instance; null for ranks told not to start. */
    final List<AllReduce> workers = new ArrayList<>();
    final List<ParameterServer> dedicatedServers = new ArrayList<>();

    LocalJob(Layout layout, int n) {
        this(layout, n, b -> b, Set.of(), List.of());
    }

    /**
     * @param absent        ranks that never start (their listeners are bound, then closed)
     * @param serverAddress dedicated servers to use instead of starting new ones (empty: start them)
     */
    LocalJob(Layout layout, int n, UnaryOperator<CollectiveConfig.Builder> tweak, Set<Integer> absent,
             List<InetSocketAddress> serverAddress) {
        int s = layout.serverCount(n);
        List<Listener> workerListeners = bindAll(n);
        List<Listener> serverListeners = serverAddress.isEmpty() ? bindAll(s) : List.of();
        List<InetSocketAddress> workerEndpoints = addresses(workerListeners);
        List<InetSocketAddress> serverEndpoints = serverAddress.isEmpty() ? addresses(serverListeners) : serverAddress;
        for (int r = 0; r < n; r++) {
            configs.add(tweak.apply(CollectiveConfig.builder().algorithm(layout.algorithm().id()).rank(r)
                    .endpoints(workerEndpoints).servers(serverEndpoints).serversInWorkers(layout.serversInWorkers())
                    .segmentBytes(layout.segmentBytes()).connectTimeout(Duration.ofSeconds(20))
                    .operationTimeout(Duration.ofSeconds(30))).build());
        }
        if (layout.algorithm() == Algorithm.PARAMETER_SERVER && !layout.serversInWorkers() && serverAddress.isEmpty()) {
            for (int i = 0; i < s; i++) {
                dedicatedServers.add(ParameterServer.start(configs.get(0).parameterServer(i), serverListeners.get(i)));
            }
        }
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<CompletableFuture<AllReduce>> opening = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                CollectiveConfig config = configs.get(r);
                Listener serverListener = layout.serversInWorkers() && r < s && serverAddress.isEmpty() ? serverListeners.get(r) : null;
                if (absent.contains(r)) {
                    workerListeners.get(r).close();
                    if (serverListener != null) {
                        serverListener.close();
                    }
                    opening.add(CompletableFuture.completedFuture(null));
                } else {
                    Listener workerListener = workerListeners.get(r);
                    opening.add(CompletableFuture.supplyAsync(() -> Collectives.open(config, workerListener, serverListener), pool));
                }
            }
            RuntimeException failure = null;
            for (CompletableFuture<AllReduce> f : opening) {
                try {
                    workers.add(f.join());
                } catch (CompletionException e) {
                    workers.add(null);
                    failure = failure == null ? (RuntimeException) e.getCause() : failure;
                }
            }
            if (failure != null) {
                close();
                throw failure;
            }
        } finally {
            pool.shutdown();
        }
    }

    static List<Listener> bindAll(int count) {
        List<Listener> listeners = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            listeners.add(Listener.bind(new InetSocketAddress("127.0.0.1", 0)));
        }
        return listeners;
    }

    static List<InetSocketAddress> addresses(List<Listener> listeners) {
        List<InetSocketAddress> a = new ArrayList<>();
        for (Listener l : listeners) {
            a.add(l.address());
        }
        return a;
    }

    int size() {
        return workers.size();
    }

    /** Runs {@code body(rank, instance)} on every rank at once and returns the results in rank order. */
    <T> List<T> onEveryRank(RankBody<T> body) {
        ExecutorService pool = Executors.newFixedThreadPool(workers.size());
        try {
            List<CompletableFuture<T>> futures = new ArrayList<>();
            for (int r = 0; r < workers.size(); r++) {
                int rank = r;
                futures.add(CompletableFuture.supplyAsync(() -> body.run(rank, workers.get(rank)), pool));
            }
            List<T> results = new ArrayList<>();
            for (CompletableFuture<T> f : futures) {
                results.add(f.orTimeout(120, TimeUnit.SECONDS).join());
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    interface RankBody<T> {
        T run(int rank, AllReduce allReduce);
    }

    @Override
    public void close() {
        List<AllReduce> all = new ArrayList<>(workers);
        Collections.reverse(all);
        for (AllReduce w : all) {
            if (w != null) {
                w.close();
            }
        }
        for (ParameterServer s : dedicatedServers) {
            s.close();
        }
    }
}
