package io.switchml.collectives;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The settings of the gradient compression baselines ({@code topk}, {@code qsgd}); every worker of a job
 * must use the same ones (each message carries them, and a worker that receives different ones fails with
 * a {@link io.switchml.api.MismatchedOperationException}). Checked when built.
 *
 * @param ratio  {@code topk}: the share of elements each worker sends, k = max(1, round(ratio x length)), in (0, 1]
 * @param levels {@code qsgd}: s, the quantization levels per sign (QSGD's s), 1..32767; each element is sent
 *               as one of 2s+1 codes in {@link #codeBits()} bits
 * @param bucket {@code qsgd}: elements per bucket, each scaled by its own norm (QSGD's d), 1..2^24
 * @param norm   {@code qsgd}: the norm each bucket is scaled by: {@code l2} (QSGD's analysis) or {@code max}
 * @param seed   {@code qsgd}: the seed of the stochastic rounding; the random number of element i is a function
 *               of (seed, rank, the tensor's step, i), so results are reproducible
 * @param warmup {@code topk}: steps of each tensor during which the share sent falls from all to the ratio
 *               ({@link #topK(int, long)}); 0 for none
 * @param momentum {@code topk}: DGC's momentum correction, in [0, 1): the compressor keeps a velocity
 *               {@code u = momentum x u + g} per element and accumulates u (not g) into the residual, and clears
 *               the velocity of the elements it sends (momentum factor masking); the caller then applies the
 *               result with plain SGD, the momentum being done here. 0: plain error feedback (the gradient itself)
 */
public record Compression(double ratio, int levels, int bucket, Norm norm, long seed, int warmup, double momentum) {
    public static final double DEFAULT_RATIO = 0.01;
    /** 7 levels per sign: 15 codes, 4 bits an element (QSGD's 4-bit variant). */
    public static final int DEFAULT_LEVELS = 7;
    /** QSGD's bucket size in its experiments. */
    public static final int DEFAULT_BUCKET = 512;
    public static final long DEFAULT_SEED = 1;
    public static final int MAX_LEVELS = (1 << 15) - 1;
    public static final int MAX_BUCKET = 1 << 24;
    /** The defaults: 1 % top-k without warm-up or momentum correction; 4-bit QSGD, buckets of 512, L2 norm, seed 1. */
    public static final Compression DEFAULTS = new Compression(DEFAULT_RATIO, DEFAULT_LEVELS, DEFAULT_BUCKET, Norm.L2,
            DEFAULT_SEED, 0, 0);

    public Compression(double ratio, int levels, int bucket, Norm norm, long seed) {
        this(ratio, levels, bucket, norm, seed, 0, 0);
    }

    /** Without momentum correction. */
    public Compression(double ratio, int levels, int bucket, Norm norm, long seed, int warmup) {
        this(ratio, levels, bucket, norm, seed, warmup, 0);
    }

    /** What a {@code qsgd} bucket is scaled by. */
    public enum Norm {
        /** The Euclidean norm of the bucket, as QSGD's analysis (unbiased, variance bounded by min(d/s^2, sqrt(d)/s)). */
        L2,
        /** The largest magnitude in the bucket: more levels used, lower variance, as many implementations do. */
        MAX;

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Norm named(String name) {
            for (Norm n : values()) {
                if (n.id().equalsIgnoreCase(name == null ? "" : name.trim())) {
                    return n;
                }
            }
            throw new IllegalArgumentException("unknown QSGD norm '" + name + "'; known: l2, max");
        }
    }

    public Compression {
        if (!(ratio > 0 && ratio <= 1)) {
            throw new IllegalArgumentException("top-k ratio " + ratio + " must be in (0, 1], e.g. 0.01 for 1 %");
        }
        if (levels < 1 || levels > MAX_LEVELS) {
            throw new IllegalArgumentException("QSGD levels " + levels + " must be in 1.." + MAX_LEVELS);
        }
        if (bucket < 1 || bucket > MAX_BUCKET) {
            throw new IllegalArgumentException("QSGD bucket " + bucket + " must be in 1.." + MAX_BUCKET + " elements");
        }
        if (warmup < 0) {
            throw new IllegalArgumentException("top-k warm-up " + warmup + " must be at least 0 steps");
        }
        if (norm == null) {
            throw new IllegalArgumentException("QSGD norm is required: l2 or max");
        }
        if (!(momentum >= 0 && momentum < 1)) {
            throw new IllegalArgumentException("top-k momentum " + momentum + " must be in [0, 1), e.g. 0.9; 0 for none");
        }
    }

    public Compression withRatio(double r) {
        return new Compression(r, levels, bucket, norm, seed, warmup, momentum);
    }

    public Compression withLevels(int s) {
        return new Compression(ratio, s, bucket, norm, seed, warmup, momentum);
    }

    public Compression withBucket(int d) {
        return new Compression(ratio, levels, d, norm, seed, warmup, momentum);
    }

    public Compression withNorm(Norm n) {
        return new Compression(ratio, levels, bucket, n, seed, warmup, momentum);
    }

    public Compression withSeed(long s) {
        return new Compression(ratio, levels, bucket, norm, s, warmup, momentum);
    }

    public Compression withWarmup(int steps) {
        return new Compression(ratio, levels, bucket, norm, seed, steps, momentum);
    }

    public Compression withMomentum(double m) {
        return new Compression(ratio, levels, bucket, norm, seed, warmup, m);
    }

    /** {@code topk}: the momentum as the compressor computes with it (float32), and as its messages carry it. */
    public float momentumFactor() {
        return (float) momentum;
    }

    /** {@code topk}: elements each worker sends of a tensor of {@code length}: max(1, round(ratio x length)), at most length. */
    public int topK(int length) {
        return topK(length, warmup);
    }

    /**
     * {@code topk}: the same at the tensor's step {@code step} (0 for its first all-reduce): during the warm-up, the
     * share sent falls exponentially from all to the ratio, {@code ratio^((step + 1) / warmup)} (DGC's warm-up
     * training); from step {@code warmup - 1} on it is the ratio.
     */
    public int topK(int length, long step) {
        if (length == 0) {
            return 0;
        }
        double share = step + 1 >= warmup ? ratio : Math.max(ratio, StrictMath.pow(ratio, (step + 1.0) / warmup));
        long k = Math.round(share * length);
        return (int) Math.max(1, Math.min(length, k));
    }

    /** {@code qsgd}: bits of one element's code, ceil(log2(2s + 1)): 4 for s = 7, 8 for s = 127. */
    public int codeBits() {
        return 32 - Integer.numberOfLeadingZeros(2 * levels);
    }

    /** The settings as one line, {@code ratio=0.01,levels=7,bucket=512,norm=l2,seed=1,...} ({@link #parse} reads it back). */
    public String toSpec() {
        return "ratio=" + ratio + ",levels=" + levels + ",bucket=" + bucket + ",norm=" + norm.id() + ",seed=" + seed
                + ",warmup=" + warmup + ",momentum=" + momentum;
    }

    /** Reads {@link #toSpec()}; a key left out keeps its default. */
    public static Compression parse(String spec) {
        Map<String, String> values = new LinkedHashMap<>();
        if (spec != null && !spec.isBlank()) {
            for (String item : spec.split(",")) {
                int eq = item.indexOf('=');
                if (eq < 1) {
                    throw new IllegalArgumentException("compression setting '" + item + "' is not key=value");
                }
                values.put(item.substring(0, eq).trim(), item.substring(eq + 1).trim());
            }
        }
        Compression c = DEFAULTS;
        for (Map.Entry<String, String> e : values.entrySet()) {
            String v = e.getValue();
            switch (e.getKey()) {
                case "ratio" -> c = c.withRatio(Double.parseDouble(v));
                case "levels" -> c = c.withLevels(Integer.parseInt(v));
                case "bucket" -> c = c.withBucket(Integer.parseInt(v));
                case "norm" -> c = c.withNorm(Norm.named(v));
                case "seed" -> c = c.withSeed(Long.parseLong(v));
                case "warmup" -> c = c.withWarmup(Integer.parseInt(v));
                case "momentum" -> c = c.withMomentum(Double.parseDouble(v));
                default -> throw new IllegalArgumentException("unknown compression setting '" + e.getKey()
                        + "'; known: ratio, levels, bucket, norm, seed, warmup, momentum");
            }
        }
        return c;
    }

    /** What {@code algorithm} uses of these settings, for messages and reports, e.g. "top-k 1 %" or "QSGD s=7 (4 bits)". */
    public String describe(Algorithm algorithm) {
        return switch (algorithm) {
            case TOPK -> String.format(Locale.ROOT, "top-k %s %% with error feedback", percent(ratio))
                    + (warmup > 0 ? ", warm-up " + warmup + " steps" : "")
                    + (momentum > 0 ? ", momentum correction " + momentum : "");
            case QSGD -> "QSGD s=" + levels + " (" + codeBits() + " bits), buckets of " + bucket + ", " + norm.id()
                    + " norm, seed " + seed;
            default -> algorithm.id();
        };
    }

    private static String percent(double r) {
        double p = r * 100;
        return p == Math.rint(p) ? String.valueOf((long) p) : String.valueOf(p);
    }
}
