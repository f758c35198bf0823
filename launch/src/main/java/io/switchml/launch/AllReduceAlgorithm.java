package io.switchml.launch;

import io.switchml.collectives.Algorithm;

import java.util.Locale;

/**
 * The all-reduce algorithms the bench measures, by their {@code --algo} names: {@code switchml}
 * (in-network aggregation through a switch), and the baselines of the collectives module,
 * {@code ring} and {@code ps} (TCP between the worker processes, no switch), and the gradient
 * compression baselines {@code topk} and {@code qsgd} (compressed tensors exchanged by all-gather
 * around the ring).
 */
public enum AllReduceAlgorithm {
    SWITCHML("switchml", null),
    RING("ring", Algorithm.RING),
    PS("ps", Algorithm.PARAMETER_SERVER),
    TOPK("topk", Algorithm.TOPK),
    QSGD("qsgd", Algorithm.QSGD);

    private final String id;
    private final Algorithm collective;

    AllReduceAlgorithm(String id, Algorithm collective) {
        this.id = id;
        this.collective = collective;
    }

    /** The name in {@code --algo}, in worker plans and in the rows' {@code algo} field. */
    public String id() {
        return id;
    }

    /** The collectives module's algorithm, or null for {@code switchml}. */
    public Algorithm collective() {
        return collective;
    }

    /** Whether its workers need a switch. */
    public boolean needsSwitch() {
        return collective == null;
    }

    /** Whether its float32 results are of compressed tensors ({@code topk}, {@code qsgd}). */
    public boolean compressed() {
        return collective != null && collective.compressed();
    }

    /** The algorithm of that name (case-insensitive), or an error listing the known names. */
    public static AllReduceAlgorithm named(String name) {
        String wanted = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        for (AllReduceAlgorithm a : values()) {
            if (a.id.equals(wanted)) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown all-reduce algorithm '" + name + "'; known: switchml, ring, ps, topk, qsgd");
    }

    @Override
    public String toString() {
        return id;
    }
}
