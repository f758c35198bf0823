package io.switchml.bench;

/**
 * Deterministic tensors: the value of element i on rank r depends only on (seed, r, i), so every
 * worker can recompute any rank's block to check a result. Float values vary in sign and magnitude
 * from block to block (exponents from 2^-6 to 2^5), to exercise the block scaling.
 */
public final class TensorGenerator {
    private final long seed;

    public TensorGenerator(long seed) {
        this.seed = seed;
    }

    public float floatAt(int rank, long index) {
        long h = mix(seed, rank, index);
        float unit = (h >>> 40) / (float) (1 << 24) - 0.5f;           // [-0.5, 0.5)
        int exponent = (int) ((index >>> 10) % 12) - 5;               // changes every 1024 elements
        return Math.scalb(unit, exponent);
    }

    public int intAt(int rank, long index) {
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
