package io.switchml.bench;

/** The topologies of the cost model, each one curve of {@code switchml cost} (docs/COST_MODEL.md). */
public enum CostTopology {
    RING("ring"),
    PS_COLOCATED("ps (server per worker)"),
    PS_DEDICATED("ps (k servers)"),
    FABRIC("fabric switch"),
    SWITCH_HOST("one switch host"),
    SHARDED("sharded switch (k hosts)"),
    HIERARCHY_FABRIC_SPINE("hierarchy, fabric spine"),
    HIERARCHY_SERVER_SPINE("hierarchy, server spine");

    private final String label;

    CostTopology(String label) {
        this.label = label;
    }

    /** What a table column, a JSON key's reader or a plot's legend calls it. */
    public String label() {
        return label;
    }

    /** False for a hierarchy with more leaves than workers, which does not exist. */
    public boolean applies(int workers, int leaves) {
        return !isHierarchy() || leaves <= workers;
    }

    /** Seconds for one all-reduce of {@code bytes} over {@code workers}, with k = {@code shards}, L = {@code leaves}. */
    public double seconds(CostModel model, int workers, long bytes, int shards, int leaves) {
        return switch (this) {
            case RING -> model.ring(workers, bytes);
            case PS_COLOCATED -> model.colocatedParameterServer(workers, bytes);
            case PS_DEDICATED -> model.dedicatedParameterServer(workers, shards, bytes);
            case FABRIC -> model.fabricSwitch(workers, bytes);
            case SWITCH_HOST -> model.switchHost(workers, bytes);
            case SHARDED -> model.shardedSwitch(workers, shards, bytes);
            case HIERARCHY_FABRIC_SPINE -> model.hierarchy(workers, leaves, CostModel.Spine.FABRIC, bytes);
            case HIERARCHY_SERVER_SPINE -> model.hierarchy(workers, leaves, CostModel.Spine.SERVER, bytes);
        };
    }

    private boolean isHierarchy() {
        return this == HIERARCHY_FABRIC_SPINE || this == HIERARCHY_SERVER_SPINE;
    }
}
