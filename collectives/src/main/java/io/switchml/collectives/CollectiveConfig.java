package io.switchml.collectives;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One worker's settings for a baseline all-reduce. Every worker of the job uses the same values
 * except {@code rank}. Checked when built: a bad value fails here, with its name, not mid-job.
 *
 * @param algorithm        {@code ring}, {@code ps}, {@code topk} or {@code qsgd}
 * @param rank             this worker's rank, 0..workers-1
 * @param workers          workers in the job
 * @param endpoints        every worker's host:port, in rank order; rank i listens on endpoints[i]
 * @param servers          {@code ps} only: every parameter server's host:port, in shard order; the tensor is
 *                         cut into servers.size() shards
 * @param serversInWorkers {@code ps} only: true when server s runs inside rank s's process ("one per worker host",
 *                         as BytePS places them; needs servers.size() <= workers), false when the servers are
 *                         separate {@link ParameterServer} processes
 * @param connectTimeout   how long opening an instance waits for all its peers to connect
 * @param operationTimeout how long an all-reduce, barrier or broadcast may take
 * @param segmentBytes     the pipelining unit: the ring adds and forwards in segments of this size, a server sums
 *                         and returns in frames of this size; a multiple of 4
 * @param compression      {@code topk} and {@code qsgd} only: ratio, levels, bucket, norm, seed (the same on every worker)
 */
public record CollectiveConfig(Algorithm algorithm, int rank, int workers, List<InetSocketAddress> endpoints,
                               List<InetSocketAddress> servers, boolean serversInWorkers, Duration connectTimeout,
                               Duration operationTimeout, int segmentBytes, Compression compression) {
    public static final int MAX_WORKERS = 4096;
    public static final int MAX_SEGMENT_BYTES = 64 << 20;
    public static final int DEFAULT_SEGMENT_BYTES = 256 << 10;
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(60);
    public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(60);

    /** Without compression settings (the defaults, which only {@code topk} and {@code qsgd} read). */
    public CollectiveConfig(Algorithm algorithm, int rank, int workers, List<InetSocketAddress> endpoints,
                            List<InetSocketAddress> servers, boolean serversInWorkers, Duration connectTimeout,
                            Duration operationTimeout, int segmentBytes) {
        this(algorithm, rank, workers, endpoints, servers, serversInWorkers, connectTimeout, operationTimeout, segmentBytes,
                Compression.DEFAULTS);
    }

    public CollectiveConfig {
        Objects.requireNonNull(algorithm, "algorithm");
        Objects.requireNonNull(compression, "compression");
        endpoints = List.copyOf(Objects.requireNonNull(endpoints, "endpoints"));
        servers = List.copyOf(Objects.requireNonNull(servers, "servers"));
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(operationTimeout, "operationTimeout");
        if (workers < 1 || workers > MAX_WORKERS) {
            throw new IllegalArgumentException("workers = " + workers + " outside 1.." + MAX_WORKERS);
        }
        if (rank < 0 || rank >= workers) {
            throw new IllegalArgumentException("rank = " + rank + " outside 0.." + (workers - 1));
        }
        if (endpoints.size() != workers) {
            throw new IllegalArgumentException("endpoints lists " + endpoints.size() + " addresses but workers = " + workers
                    + "; give one host:port per rank, in rank order");
        }
        Set<InetSocketAddress> seen = new HashSet<>();
        for (int r = 0; r < workers; r++) {
            if (!seen.add(endpoints.get(r))) {
                throw new IllegalArgumentException("endpoints: rank " + r + "'s " + endpoints.get(r) + " is listed twice");
            }
        }
        if (algorithm == Algorithm.PARAMETER_SERVER) {
            if (servers.isEmpty()) {
                throw new IllegalArgumentException("ps needs at least one server endpoint (servers)");
            }
            if (serversInWorkers && servers.size() > workers) {
                throw new IllegalArgumentException("servers lists " + servers.size() + " addresses but with servers in the"
                        + " workers' processes (serversInWorkers) there can be at most one per worker, " + workers);
            }
            for (int s = 0; s < servers.size(); s++) {
                if (!seen.add(servers.get(s))) {
                    throw new IllegalArgumentException("servers: server " + s + "'s " + servers.get(s)
                            + " is listed twice or is also a worker endpoint");
                }
            }
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("connectTimeout must be positive, not " + connectTimeout);
        }
        if (operationTimeout.isNegative() || operationTimeout.isZero()) {
            throw new IllegalArgumentException("operationTimeout must be positive, not " + operationTimeout);
        }
        if (segmentBytes < ElementType.BYTES || segmentBytes > MAX_SEGMENT_BYTES || segmentBytes % ElementType.BYTES != 0) {
            throw new IllegalArgumentException("segmentBytes = " + segmentBytes + ": must be a multiple of 4 in 4.."
                    + MAX_SEGMENT_BYTES);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Parameter servers in the job (0 for the ring). */
    public int serverCount() {
        return algorithm == Algorithm.PARAMETER_SERVER ? servers.size() : 0;
    }

    /** The settings of parameter server {@code index} of this job (for a dedicated server process too). */
    public ParameterServerConfig parameterServer(int index) {
        if (index < 0 || index >= serverCount()) {
            throw new IllegalArgumentException("server " + index + " outside 0.." + (serverCount() - 1));
        }
        return new ParameterServerConfig(index, servers.size(), workers, servers.get(index), connectTimeout,
                operationTimeout, segmentBytes);
    }

    /** A builder holding these values, to derive a changed configuration (e.g. another rank's). */
    public Builder toBuilder() {
        return new Builder().algorithm(algorithm.id()).rank(rank).workers(workers).endpoints(endpoints).servers(servers)
                .serversInWorkers(serversInWorkers).connectTimeout(connectTimeout).operationTimeout(operationTimeout)
                .segmentBytes(segmentBytes).compression(compression);
    }

    /** Collects values; {@link #build()} checks them. Unset: workers = endpoints.size(), defaults below. */
    public static final class Builder {
        private Algorithm algorithm = Algorithm.RING;
        private Integer rank;
        private Integer workers;
        private List<InetSocketAddress> endpoints = List.of();
        private List<InetSocketAddress> servers = List.of();
        private boolean serversInWorkers = true;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration operationTimeout = DEFAULT_OPERATION_TIMEOUT;
        private int segmentBytes = DEFAULT_SEGMENT_BYTES;
        private Compression compression = Compression.DEFAULTS;

        private Builder() {
        }

        /** {@code ring}, {@code ps}, {@code topk} or {@code qsgd}. */
        public Builder algorithm(String name) {
            this.algorithm = Algorithm.named(name);
            return this;
        }

        public Builder rank(int rank) {
            this.rank = rank;
            return this;
        }

        public Builder workers(int workers) {
            this.workers = workers;
            return this;
        }

        public Builder endpoints(List<InetSocketAddress> endpoints) {
            this.endpoints = endpoints;
            return this;
        }

        /** {@code host:port,host:port,...} in rank order. */
        public Builder endpoints(String list) {
            return endpoints(Endpoints.parse(list));
        }

        public Builder servers(List<InetSocketAddress> servers) {
            this.servers = servers;
            return this;
        }

        public Builder servers(String list) {
            return servers(Endpoints.parse(list));
        }

        public Builder serversInWorkers(boolean inWorkers) {
            this.serversInWorkers = inWorkers;
            return this;
        }

        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        public Builder operationTimeout(Duration timeout) {
            this.operationTimeout = timeout;
            return this;
        }

        public Builder segmentBytes(int bytes) {
            this.segmentBytes = bytes;
            return this;
        }

        /** {@code topk} and {@code qsgd}: the compression settings. */
        public Builder compression(Compression compression) {
            this.compression = compression;
            return this;
        }

        public CollectiveConfig build() {
            if (rank == null) {
                throw new IllegalArgumentException("rank is required: this worker's rank, 0..workers-1");
            }
            return new CollectiveConfig(algorithm, rank, workers != null ? workers : endpoints.size(), endpoints, servers,
                    serversInWorkers, connectTimeout, operationTimeout, segmentBytes, compression);
        }
    }
}
