package io.switchml.collectives;

import io.switchml.api.ReduceOp;

import java.util.Arrays;
import java.util.function.IntFunction;

/**
 * The exact result of {@code topk} ({@link CompressedAllReduce} with {@link TopKCodec}), computed locally:
 * every worker's error-feedback compressor replayed step by step, and the sparse messages added in rank
 * order, as the all-reduce does. Tests and the bench compare against it bit for bit.
 *
 * <p>One step of rank r, for a tensor g with residual e (zeros at first): {@code a[i] = g[i] + e[i]};
 * S = the k indices with the largest {@code |a|} (the bits of |a|, ties to the lower index),
 * k = {@link Compression#topK}(length); rank r sends {@code a[i]} for i in S and keeps
 * {@code e[i] = 0} for i in S, {@code e[i] = a[i]} elsewhere. The result:
 * {@code s = 0; for r = 0..n-1: if i in S[r]: s = s + a[r][i]}, then for MEAN {@code s / (float) n}.
 */
public final class TopKReference {
    private TopKReference() {
    }

    /**
     * The indices of the k largest-magnitude elements, by the definition: sort every index by (bits of |x|
     * descending, index ascending), take the first k, return them in ascending order. O(n log n); the
     * all-reduce selects the same with a radix select, which the tests compare with this.
     */
    public static int[] selectByDefinition(float[] values, int k) {
        long[] keys = new long[values.length];
        for (int i = 0; i < values.length; i++) {
            keys[i] = (long) (Integer.MAX_VALUE - TopKCodec.key(values[i])) << 32 | i;
        }
        Arrays.sort(keys);
        int[] chosen = new int[k];
        for (int j = 0; j < k; j++) {
            chosen[j] = (int) keys[j];
        }
        Arrays.sort(chosen);
        return chosen;
    }

    /** The indices the all-reduce selects ({@link TopKCodec#select}), ascending. */
    public static int[] select(float[] values, int k) {
        int[] chosen = new int[k];
        TopKCodec.select(values, values.length, k, chosen, new int[1 << 16]);
        return chosen;
    }

    /** One worker's compressor: its residual, from zeros. */
    public static final class Worker {
        private final Compression compression;
        private final float[] residual;
        private final float[] velocity;
        private final int[] selected;
        private final int[] histogram = new int[1 << 16];
        private long steps;

        public Worker(int length, Compression compression) {
            this.compression = compression;
            this.residual = new float[length];
            this.velocity = new float[compression.momentum() > 0 ? length : 0];
            this.selected = new int[compression.topK(length, 0)]; // the largest k: the warm-up only lowers it
        }

        /** One step with this gradient: adds the values it sends into {@code sum} ({@code sum[i] = sum[i] + a[i]}). */
        public void step(float[] gradient, float[] sum) {
            int length = residual.length;
            float m = compression.momentumFactor();
            for (int i = 0; i < length; i++) {
                if (m == 0f) {
                    residual[i] = gradient[i] + residual[i];
                } else {
                    velocity[i] = m * velocity[i] + gradient[i];
                    residual[i] = residual[i] + velocity[i];
                }
            }
            int k = compression.topK(length, steps++);
            TopKCodec.select(residual, length, k, selected, histogram);
            for (int j = 0; j < k; j++) {
                int i = selected[j];
                if (sum != null) {
                    sum[i] = sum[i] + residual[i];
                }
                residual[i] = 0f;
                if (m != 0f) {
                    velocity[i] = 0f;
                }
            }
        }

        /** The residual now (a copy). */
        public float[] residual() {
            return residual.clone();
        }

        /** The velocity now (a copy; zeros without momentum correction). */
        public float[] velocity() {
            return velocity.length == residual.length ? velocity.clone() : new float[residual.length];
        }
    }

    /** A job of n workers that all-reduces one tensor per step; every rank's state carried from step to step. */
    public static final class Job {
        private final Worker[] workers;
        private final int length;

        public Job(int workers, int length, Compression compression) {
            this.workers = new Worker[workers];
            this.length = length;
            for (int r = 0; r < workers; r++) {
                this.workers[r] = new Worker(length, compression);
            }
        }

        /** The next all-reduce's result, given every rank's tensor. */
        public float[] allReduce(float[][] tensorByRank, ReduceOp op) {
            float[] sum = new float[length];
            for (int r = 0; r < workers.length; r++) {
                workers[r].step(tensorByRank[r], sum);
            }
            return finish(sum, workers.length, op);
        }
    }

    /** The result of the first all-reduce of fresh tensors ({@code rounds} = 1), or of the last of {@code rounds} of the same tensors. */
    public static float[] floats(float[][] tensorByRank, int rounds, Compression compression, ReduceOp op) {
        return repeated(r -> tensorByRank[r], tensorByRank.length, tensorByRank[0].length, rounds, compression, op);
    }

    /**
     * The last result of {@code rounds} all-reduces of the same tensors from zero residuals (what the bench does
     * to one size: warm-ups, then timed iterations, on the same input), one rank at a time, so memory stays at a
     * few tensors whatever the worker count.
     *
     * @param tensorOfRank each rank's tensor, called once per rank in rank order
     */
    public static float[] repeated(IntFunction<float[]> tensorOfRank, int workers, int length, int rounds,
                                   Compression compression, ReduceOp op) {
        if (rounds < 1) {
            throw new IllegalArgumentException("need at least one round, not " + rounds);
        }
        float[] sum = new float[length];
        for (int r = 0; r < workers; r++) {
            float[] gradient = tensorOfRank.apply(r);
            Worker w = new Worker(length, compression);
            for (int t = 0; t < rounds; t++) {
                w.step(gradient, t == rounds - 1 ? sum : null);
            }
        }
        return finish(sum, workers, op);
    }

    static float[] finish(float[] sum, int workers, ReduceOp op) {
        if (op == ReduceOp.MEAN) {
            float d = workers;
            for (int i = 0; i < sum.length; i++) {
                sum[i] = sum[i] / d;
            }
        }
        return sum;
    }
}
