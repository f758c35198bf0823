package io.switchml.bench;

/**
 * All-reduce time of one tensor of S bytes in seconds, for ring, parameter server, in-network aggregation on a switch
 * chip (the fabric), a switch that is one server, a switch sharded over k servers and a two-level hierarchy of switches
 * (docs/COST_MODEL.md). Pure functions of the topology.
 *
 * <p>Assumptions shared by every formula: links are full duplex and both directions run at the same rate; the
 * all-reduce is pipelined (chunks), so its time is that of the busiest link direction, each direction carrying its
 * bytes once; a link of rate B moves payload at {@code efficiency x B / 8} bytes/s, where efficiency = packet payload
 * / wire bytes ({@link #switchEfficiency}: SwitchML's UDP packets, {@link #tcpEfficiency}: TCP for ring and
 * parameter server); CPU and memory keep up; nothing is lost. Each message or hop in sequence adds {@code alpha}
 * seconds (the latency term), which only matters for small tensors or the ring's 2(n-1) steps at large n.
 *
 * @param rateBps          each host's link rate, bit/s
 * @param uplinkRateBps    a leaf switch's uplink rate to the spine, bit/s (the hierarchy)
 * @param switchEfficiency payload / wire bytes of the switch path, in (0, 1]
 * @param tcpEfficiency    payload / wire bytes of TCP, in (0, 1]
 * @param alphaSeconds     latency of one message or hop, seconds, >= 0
 */
public record CostModel(double rateBps, double uplinkRateBps, double switchEfficiency, double tcpEfficiency,
                        double alphaSeconds) {
    /** An 8 KiB SwitchML payload behind its 8-byte header and Ethernet + IPv4 + UDP headers (42 bytes), MTU 9000. */
    public static final double SWITCH_EFFICIENCY_MTU_9000 = 8192.0 / (8192 + 8 + 42);
    /** TCP's payload share: 1448 to 1460 bytes per 1514-byte frame at MTU 1500 is 0.96, 8948 per 9014 at MTU 9000 0.99. */
    public static final double TCP_EFFICIENCY = 0.97;

    /** Where the two-level hierarchy's leaves meet: a switch chip, or a server with one link of the uplink rate. */
    public enum Spine { FABRIC, SERVER }

    public CostModel {
        requirePositive("link rate", rateBps);
        requirePositive("uplink rate", uplinkRateBps);
        requireFraction("switch payload efficiency", switchEfficiency);
        requireFraction("TCP payload efficiency", tcpEfficiency);
        if (!(alphaSeconds >= 0) || Double.isInfinite(alphaSeconds)) {
            throw new IllegalArgumentException("the latency term alpha must be a finite number of seconds >= 0, not "
                    + alphaSeconds);
        }
    }

    /** Uplinks as fast as the hosts' links, SwitchML's packets at MTU 9000, TCP at 0.97. */
    public static CostModel of(double rateBps, double alphaSeconds) {
        return new CostModel(rateBps, rateBps, SWITCH_EFFICIENCY_MTU_9000, TCP_EFFICIENCY, alphaSeconds);
    }

    /** Ring: reduce-scatter then all-gather, 2(n-1) steps of S/n each; every link direction carries 2(n-1)/n S. */
    public double ring(int workers, long bytes) {
        requireWorkers(workers);
        return 2.0 * (workers - 1) / workers * tcpSeconds(bytes, rateBps) + 2.0 * (workers - 1) * alphaSeconds;
    }

    /**
     * Parameter server with one server per worker host, each owning S/n: a host sends (n-1)/n S as a worker and
     * (n-1)/n S of results as a server, so the same 2(n-1)/n S as the ring, in 2 steps (push, pull).
     */
    public double colocatedParameterServer(int workers, long bytes) {
        requireWorkers(workers);
        return workers == 1 ? 0 : 2.0 * (workers - 1) / workers * tcpSeconds(bytes, rateBps) + 2 * alphaSeconds;
    }

    /**
     * Parameter server on k dedicated servers, each owning S/k: a worker sends and receives S, a server receives and
     * sends n S/k; push and pull overlap (full duplex, pipelined), so the busier of the two ends sets the time.
     */
    public double dedicatedParameterServer(int workers, int servers, long bytes) {
        requireWorkers(workers);
        requireAtLeastOne("servers", servers);
        return Math.max(1.0, (double) workers / servers) * tcpSeconds(bytes, rateBps) + 2 * alphaSeconds;
    }

    /** In-network aggregation on a switch chip (SwitchML): each worker sends S and receives S, the switch keeps up. */
    public double fabricSwitch(int workers, long bytes) {
        return shardedSwitch(workers, workers, bytes);
    }

    /** The switch program on one server with one link: all n workers' S cross it, each way. */
    public double switchHost(int workers, long bytes) {
        return shardedSwitch(workers, 1, bytes);
    }

    /**
     * The switch program sharded over k servers (each aggregates S/k of every tensor): a shard's link carries n S/k
     * each way, a worker's S; k >= n makes it the fabric's bound.
     */
    public double shardedSwitch(int workers, int shards, long bytes) {
        requireWorkers(workers);
        requireAtLeastOne("shards", shards);
        return Math.max(1.0, (double) workers / shards) * switchSeconds(bytes, rateBps) + 2 * alphaSeconds;
    }

    /**
     * Two levels: L leaf switch chips each aggregate their n/L workers and send one partial tensor (S) up their uplink;
     * the spine adds the L partials and sends the sum back down. A fabric spine keeps up, so each uplink carries S each
     * way; a server spine has one link of the uplink rate that carries L S each way. Four hops in sequence.
     */
    public double hierarchy(int workers, int leaves, Spine spine, long bytes) {
        requireWorkers(workers);
        requireAtLeastOne("leaves", leaves);
        if (leaves > workers) {
            throw new IllegalArgumentException("a hierarchy of " + workers + " workers cannot have " + leaves
                    + " leaves (at most one leaf per worker)");
        }
        double uplinkLoad = spine == Spine.SERVER ? leaves : 1;
        return Math.max(switchSeconds(bytes, rateBps), uplinkLoad * switchSeconds(bytes, uplinkRateBps))
                + 4 * alphaSeconds;
    }

    /** S / B for payload: the bound no all-reduce beats, since every worker must send and receive S. */
    public static double bandwidthBound(long bytes, double rateBps) {
        requireBytes(bytes);
        requirePositive("link rate", rateBps);
        return bytes * 8.0 / rateBps;
    }

    private double switchSeconds(long bytes, double rate) {
        return bandwidthBound(bytes, rate) / switchEfficiency;
    }

    private double tcpSeconds(long bytes, double rate) {
        return bandwidthBound(bytes, rate) / tcpEfficiency;
    }

    private static void requireWorkers(int workers) {
        requireAtLeastOne("workers", workers);
    }

    private static void requireAtLeastOne(String what, int count) {
        if (count < 1) {
            throw new IllegalArgumentException("the number of " + what + " must be at least 1, not " + count);
        }
    }

    private static void requireBytes(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("the tensor size must be >= 0 bytes, not " + bytes);
        }
    }

    private static void requirePositive(String what, double value) {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException("the " + what + " must be a finite number > 0, not " + value);
        }
    }

    private static void requireFraction(String what, double value) {
        if (!(value > 0 && value <= 1)) {
            throw new IllegalArgumentException("the " + what + " must be in (0, 1], not " + value);
        }
    }
}
