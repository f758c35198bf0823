package io.switchml.training;

import io.switchml.launch.AllReduceAlgorithm;

import java.util.Locale;

/**
 * How the workers sum their gradients: a registered all-reduce algorithm by its name ({@code switchml}
 * through the switch; the TCP baselines {@code ring} and {@code ps}; compressed, {@code topk} with error
 * feedback and {@code qsgd}; and any other registered, see {@link AllReduceAlgorithm}), or {@code none}:
 * one process training alone, the reference that data-parallel training must match.
 *
 * @param id the algorithm's name, or {@code none}; checked against the registry (a plan read back in a worker
 *           process is checked there too)
 */
public record Aggregation(String id) {
    /** One process training alone. */
    public static final Aggregation NONE = new Aggregation("none");

    public Aggregation {
        id = id == null ? "" : id.trim().toLowerCase(Locale.ROOT);
        if (!id.equals("none")) {
            try {
                AllReduceAlgorithm.named(id);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown aggregation '" + id + "'; known: " + AllReduceAlgorithm.ids()
                        + ", none");
            }
        }
    }

    /** The aggregation of that name (case-insensitive): a registered algorithm's, or {@code none}. */
    public static Aggregation named(String name) {
        return new Aggregation(name);
    }

    /** Through the switch: {@code switchml}, the default. */
    public static Aggregation switchMl() {
        return new Aggregation(AllReduceAlgorithm.switchMl().id());
    }

    /** The all-reduce that sums the gradients, or null for {@code none}. */
    public AllReduceAlgorithm algorithm() {
        return isNone() ? null : AllReduceAlgorithm.named(id);
    }

    /** Whether one process trains alone. */
    public boolean isNone() {
        return id.equals("none");
    }

    /** Whether its workers need a switch. */
    public boolean needsSwitch() {
        return !isNone() && algorithm().needsSwitch();
    }

    /** Whether its workers exchange TCP endpoints through the launcher. */
    public boolean exchangesEndpoints() {
        return !isNone() && algorithm().exchangesEndpoints();
    }

    /** Whether its algorithm carries the optimizer's momentum itself (top-k's momentum correction). */
    public boolean correctsMomentum() {
        return !isNone() && algorithm().correctsMomentum();
    }

    @Override
    public String toString() {
        return id;
    }
}
