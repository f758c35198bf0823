package io.switchml.client;

import io.switchml.api.AllReduce;

/**
 * A worker's all-reduce through a switch, one host ({@link SwitchMLContext}) or sharded over several
 * ({@link ShardedSwitchML}); {@link #connect} picks by {@code switchml.shards}.
 */
public interface SwitchMLConnection extends AllReduce {
    /** The configuration in use: the one given, with the packet size and window chosen where they were auto. */
    SwitchMLConfig config();

    @Override
    default int rank() {
        return config().rank();
    }

    @Override
    default int workers() {
        return config().workers();
    }

    /** The worker's packet counters (of every shard together). */
    WorkerStatistics statistics();

    /** Joins the job {@code config} describes, at its sharded switch if it names shards; returns once every worker has. */
    static SwitchMLConnection connect(SwitchMLConfig config) {
        return config.shards().isEmpty() ? SwitchMLContext.connect(config) : ShardedSwitchML.connect(config);
    }
}
