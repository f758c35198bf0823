package io.switchml.training;

import io.switchml.launch.AllReduceAlgorithm;

import java.util.Locale;

/**
 * How the workers sum their gradients: through the switch ({@code switchml}), with the TCP baselines
 * ({@code ring}, {@code ps}), compressed ({@code topk}: top-k with error feedback, {@code qsgd}:
 * stochastic quantization; both exchanged by all-gather over the ring's links), or not at all
 * ({@code none}: one process training alone, the reference that data-parallel training must match).
 */
public enum Aggregation {
    SWITCHML(AllReduceAlgorithm.SWITCHML),
    RING(AllReduceAlgorithm.RING),
    PS(AllReduceAlgorithm.PS),
    TOPK(AllReduceAlgorithm.TOPK),
    QSGD(AllReduceAlgorithm.QSGD),
    NONE(null);

    private final AllReduceAlgorithm algorithm;

    Aggregation(AllReduceAlgorithm algorithm) {
        this.algorithm = algorithm;
    }

    /** The all-reduce that sums the gradients, or null for {@code none}. */
    public AllReduceAlgorithm algorithm() {
        return algorithm;
    }

    /** Whether its workers exchange TCP endpoints through the launcher (everything but the switch and none). */
    public boolean exchangesEndpoints() {
        return algorithm != null && !algorithm.needsSwitch();
    }

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Aggregation named(String name) {
        for (Aggregation a : values()) {
            if (a.id().equalsIgnoreCase(name == null ? "" : name.trim())) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown aggregation '" + name + "'; known: switchml, ring, ps, topk, qsgd, none");
    }

    @Override
    public String toString() {
        return id();
    }
}
