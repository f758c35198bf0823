package io.switchml.jmh;

import java.nio.FloatBuffer;
import java.util.SplittableRandom;

/** Reproducible gradient-like inputs: small normally distributed values of mixed sign. */
public final class Gradients {
    private Gradients() {
    }

    /** Fills {@code dst[0, limit)} with N(0, 0.01^2) values drawn from {@code seed}. */
    public static FloatBuffer fill(FloatBuffer dst, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < dst.limit(); i++) {
            dst.put(i, (float) (gaussian(random) * 0.01));
        }
        return dst;
    }

    /** A float[] of {@code elements} such values. */
    public static float[] array(int elements, long seed) {
        float[] values = new float[elements];
        fill(FloatBuffer.wrap(values), seed);
        return values;
    }

    /** Box-Muller: SplittableRandom has no nextGaussian on Java 17. */
    private static double gaussian(SplittableRandom random) {
        double u = 1.0 - random.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.nextDouble());
    }
}
