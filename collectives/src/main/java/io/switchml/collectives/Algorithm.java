package io.switchml.collectives;

import io.switchml.api.ReduceOp;

import java.util.Locale;

/** The baseline all-reduce algorithms, by the names benchmarks and configurations use. */
public enum Algorithm {
    /** {@code ring}: reduce-scatter then all-gather around the ring of workers, pipelined in segments (Gloo's ring). */
    RING("ring") {
        @Override
        public float[] reference(float[][] tensorByRank, ReduceOp op, Compression compression) {
            return RingReference.floats(tensorByRank, op);
        }
    },
    /** {@code ps}: workers push shards to parameter servers, which sum them in rank order and send the sums back. */
    PARAMETER_SERVER("ps") {
        @Override
        public float[] reference(float[][] tensorByRank, ReduceOp op, Compression compression) {
            return ParameterServerReference.floats(tensorByRank, op);
        }
    },
    /**
     * {@code topk}: each worker sends the k largest-magnitude elements of its gradient plus its residual (error
     * feedback), exchanged by all-gather around the ring ({@link CompressedAllReduce}).
     */
    TOPK("topk") {
        @Override
        public float[] reference(float[][] tensorByRank, ReduceOp op, Compression compression) {
            return TopKReference.floats(tensorByRank, 1, compression, op);
        }
    },
    /** {@code qsgd}: each worker sends its gradient stochastically quantized (QSGD), exchanged by all-gather around the ring. */
    QSGD("qsgd") {
        @Override
        public float[] reference(float[][] tensorByRank, ReduceOp op, Compression compression) {
            return QsgdReference.floats(tensorByRank, 0, compression, op);
        }
    };

    private final String id;

    Algorithm(String id) {
        this.id = id;
    }

    /** The name configurations use: {@code ring}, {@code ps}, {@code topk} or {@code qsgd}. */
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
        throw new IllegalArgumentException("unknown collective algorithm '" + name + "'; known: ring, ps, topk, qsgd"
                + " (the in-network path is SwitchMLContext, in the client module)");
    }

    /** Whether it compresses float32 tensors ({@code topk}, {@code qsgd}): its result is the sum of the compressed tensors. */
    public boolean compressed() {
        return this == TOPK || this == QSGD;
    }

    /**
     * The exact float32 result this algorithm produces, bit for bit, given every rank's tensor: for {@code topk}
     * and {@code qsgd}, the first all-reduce of fresh tensors (zero residuals, step 0) with the default
     * {@link Compression}.
     */
    public float[] reference(float[][] tensorByRank, ReduceOp op) {
        return reference(tensorByRank, op, Compression.DEFAULTS);
    }

    /** The same with these compression settings (which only {@code topk} and {@code qsgd} use). */
    public float[] reference(float[][] tensorByRank, ReduceOp op, Compression compression) {
        throw new UnsupportedOperationException(id + " has no float32 reference");
    }

    /**
     * The exact int32 result (the same for every algorithm: wrapping sum, then Java division for MEAN; {@code topk}
     * and {@code qsgd} do not compress int32 tensors, they go through the ring).
     */
    public int[] reference(int[][] tensorByRank, ReduceOp op) {
        return RingReference.ints(tensorByRank, op);
    }

    @Override
    public String toString() {
        return id;
    }
}
