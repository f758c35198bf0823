package io.switchml.collectives;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * One parameter server's settings; {@link CollectiveConfig#parameterServer(int)} derives them from
 * the job's configuration.
 *
 * @param index            which shard this server sums, 0..servers-1
 * @param servers          servers in the job (the tensor is cut into this many shards)
 * @param workers          workers in the job; every all-reduce waits for all of them
 * @param endpoint         where the server listens
 * @param connectTimeout   how long an incoming connection may take to say who it is
 * @param operationTimeout how long an all-reduce may take from its first push; then the server reports
 *                         the ranks it has not heard from to the others
 * @param segmentBytes     the server sums and returns the shard in frames of this size
 */
public record ParameterServerConfig(int index, int servers, int workers, InetSocketAddress endpoint,
                                    Duration connectTimeout, Duration operationTimeout, int segmentBytes) {
    public ParameterServerConfig {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(operationTimeout, "operationTimeout");
        if (servers < 1 || index < 0 || index >= servers) {
            throw new IllegalArgumentException("server index " + index + " outside 0.." + (servers - 1));
        }
        if (workers < 1 || workers > CollectiveConfig.MAX_WORKERS) {
            throw new IllegalArgumentException("workers = " + workers + " outside 1.." + CollectiveConfig.MAX_WORKERS);
        }
        if (segmentBytes < ElementType.BYTES || segmentBytes % ElementType.BYTES != 0) {
            throw new IllegalArgumentException("segmentBytes = " + segmentBytes + ": must be a positive multiple of 4");
        }
    }
}
