package io.switchml.bench;

/**
 * Deterministic tensors: the value of element i on rank r depends only on (seed, r, i), so every
 * worker can recompute any rank's block to check a result. Float values vary in sign and magnitude
 * from block to block (exponents from 2^-6 to 2^5), to exercise the block scaling.
 *
 * <p>A sparse tensor ({@link Sparsity}) is zero except in a fraction of its rows of
 * {@link #ROW_ELEMENTS} elements, drawn from the seed: the same rows at every rank, or each rank's own.
 */
public final class TensorGenerator {
    /** Elements of a row of a sparse tensor: 8 KiB of float32, one packet at MTU 9000. */
    public static final int ROW_ELEMENTS = 2048;

    private final long seed;
    private final Sparsity sparsity;

    public TensorGenerator(long seed) {
        this(seed, Sparsity.DENSE);
    }

    public TensorGenerator(long seed, Sparsity sparsity) {
        this.seed = seed;
        this.sparsity = sparsity;
    }

    /** Whether row {@code index / ROW_ELEMENTS} holds values at {@code rank} (always, for a dense tensor). */
    public boolean inNonZeroRow(int rank, long index) {
        if (sparsity.fraction() >= 1) {
            return true;
        }
        long h = mix(seed, sparsity.perRank() ? -2 - rank : -1, index / ROW_ELEMENTS);
        return (h >>> 11) * 0x1.0p-53 < sparsity.fraction();
    }

    public float floatAt(int rank, long index) {
        if (!inNonZeroRow(rank, index)) {
            return 0f;
        }
        long h = mix(seed, rank, index);
        float unit = (h >>> 40) / (float) (1 << 24) - 0.5f;           // [-0.5, 0.5)
        int exponent = (int) ((index >>> 10) % 12) - 5;               // changes every 1024 elements
        return Math.scalb(unit, exponent);
    }

    public int intAt(int rank, long index) {
        if (!inNonZeroRow(rank, index)) {
            return 0;
        }
        return (int) (mix(seed, rank, index) >>> 40) - (1 << 23);     // [-2^23, 2^23): no wrap for n <= 256
    }

    public void fill(int rank, float[] dst, long firstIndex, int length) {
        for (int i = 0; i < length; i++) {
            dst[i] = floatAt(rank, firstIndex + i);
        }
    }

    public void fill(int rank, int[] dst, long firstIndex, int length) {
        for (int i = 0; i < length; i++) {
            dst[i] = intAt(rank, firstIndex + i);
        }
    }

    /** SplitMix64 finalizer over the three inputs. */
    private static long mix(long seed, int rank, long index) {
        long z = seed + 0x9E3779B97F4A7C15L * (index + 1) + 0xD1B54A32D192ED03L * (rank + 1);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
