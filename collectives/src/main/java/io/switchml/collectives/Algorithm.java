package io.switchml.collectives;

import io.switchml.client.ReduceOp;

import java.util.Locale;

/** The baseline all-reduce algorithms, by the names benchmarks and configurations use. */
public enum Algorithm {
    /** {@code ring}: reduce-scatter then all-gather around the ring of workers, pipelined in segments (Gloo's ring). */
    RING("ring") {
        @Override
        public float[] reference(float[][] tensorByRank, ReduceOp op) {
            return RingReference.floats(tensorByRank, op);
        }
    },
    /** {@code ps}: workers push shards to parameter servers, which sum them in rank order and send the sums back. */
    PARAMETER_SERVER("ps") {
        @Override
        public float[] reference(float[][] tensorByRank, ReduceOp op) {
            return ParameterServerReference.floats(tensorByRank, op);
        }
    };

    private final String id;

    Algorithm(String id) {
        this.id = id;
    }

    /** The name configurations use: {@code ring} or {@code ps}. */
    public String id() {
        return id;
    }

    /** The algorithm of that name (case-insensitive). */
    public static Algorithm named(String name) {
        String wanted = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        for (Algorithm a : values()) {
            if (a.id.equals(wanted)) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown collective algorithm '" + name + "'; known: ring, ps"
                + " (the in-network path is SwitchMLContext, in the client module)");
    }

    /** The exact float32 result this algorithm produces, bit for bit, given every rank's tensor. */
    public abstract float[] reference(float[][] tensorByRank, ReduceOp op);

    /** The exact int32 result (the same for every algorithm: wrapping sum, then Java division for MEAN). */
    public int[] reference(int[][] tensorByRank, ReduceOp op) {
        return RingReference.ints(tensorByRank, op);
    }

    @Override
    public String toString() {
        return id;
    }
}
