package io.switchml.client;

import java.util.SplittableRandom;

/** Reproducible test inputs: signs, magnitudes from 2^-20 to 2^20 varying by block, zero blocks. */
final class TestTensors {
    private TestTensors() {
    }

    static float[] floats(long seed, int rank, int length) {
        SplittableRandom random = new SplittableRandom(seed * 1_000_003 + rank);
        float[] x = new float[length];
        for (int i = 0; i < length; i++) {
            int block = i / 2048;
            if (block % 7 == 3) {
                continue; // an all-zero block
            }
            int exponent = (int) ((block * 11L + seed) % 41) - 20;
            x[i] = (float) Math.scalb(random.nextDouble(-1, 1), exponent);
        }
        return x;
    }

    static int[] ints(long seed, int rank, int length) {
        SplittableRandom random = new SplittableRandom(seed * 7_000_003 + rank);
        int[] x = new int[length];
        for (int i = 0; i < length; i++) {
            x[i] = random.nextInt();
        }
        return x;
    }

    static float[][] floatsByRank(long seed, int workers, int length) {
        float[][] all = new float[workers][];
        for (int r = 0; r < workers; r++) {
            all[r] = floats(seed, r, length);
        }
        return all;
    }

    static int[][] intsByRank(long seed, int workers, int length) {
        int[][] all = new int[workers][];
        for (int r = 0; r < workers; r++) {
            all[r] = ints(seed, r, length);
        }
        return all;
    }
}
