package io.switchml.training;

import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import io.switchml.collectives.Compression;

import java.util.Locale;

/**
 * The optimizer that applies the aggregated gradient: Adam, or SGD with momentum.
 *
 * <p>With {@code topk} and momentum SGD the momentum is done by the top-k compressor, not by the
 * optimizer: Deep Gradient Compression's momentum correction ({@link Compression#momentum}). Each
 * worker accumulates its velocity {@code u = m u + g} into the residual and sends the largest
 * elements of that, and the optimizer applies the mean of what was sent with plain SGD. Momentum
 * applied after the sparse exchange would instead carry each coordinate's rare bursts on for
 * ~1/(1-m) steps, and Adam divides a burst of T steps' worth by about its own size, moving the
 * coordinate by ~sqrt(T) steps' worth instead of T (BENCHMARKS.md section 14). So {@code topk}
 * trains with momentum SGD by default ({@link #defaultFor}); every other aggregation with Adam.
 *
 * @param kind     which optimizer
 * @param momentum {@code sgd}: the momentum, in [0, 1); 0 for {@code adam}
 */
public record TrainOptimizer(Kind kind, float momentum) {
    /** The momentum of {@code sgd} unless told otherwise (DGC's, and the usual one). */
    public static final float DEFAULT_MOMENTUM = 0.9f;
    public static final TrainOptimizer ADAM = new TrainOptimizer(Kind.ADAM, 0);

    /** Which optimizer. */
    public enum Kind {
        /** DJL's Adam, its default betas and epsilon. */
        ADAM(0.001f),
        /** SGD with momentum (heavy ball: u = m u + g, w = w - lr u). */
        SGD(0.05f);

        private final float defaultLearningRate;

        Kind(float defaultLearningRate) {
            this.defaultLearningRate = defaultLearningRate;
        }

        /** The learning rate a run uses when none is given. */
        public float defaultLearningRate() {
            return defaultLearningRate;
        }

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Kind named(String name) {
            for (Kind k : values()) {
                if (k.id().equalsIgnoreCase(name == null ? "" : name.trim())) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown optimizer '" + name + "'; known: adam, sgd");
        }
    }

    public TrainOptimizer {
        java.util.Objects.requireNonNull(kind, "kind");
        if (!(momentum >= 0 && momentum < 1)) {
            throw new IllegalArgumentException("momentum " + momentum + " must be in [0, 1), e.g. 0.9");
        }
        if (kind == Kind.ADAM && momentum != 0) {
            throw new IllegalArgumentException("adam takes no momentum (its betas are fixed); momentum is for sgd");
        }
    }

    public static TrainOptimizer sgd(float momentum) {
        return new TrainOptimizer(Kind.SGD, momentum);
    }

    /** {@code kind} with {@code momentum} where it takes one (sgd). */
    public static TrainOptimizer of(Kind kind, float momentum) {
        return kind == Kind.ADAM ? ADAM : sgd(momentum);
    }

    /** What an aggregation trains with when no optimizer is given: momentum SGD (0.9) for {@code topk}, Adam otherwise. */
    public static TrainOptimizer defaultFor(Aggregation aggregation) {
        return aggregation == Aggregation.TOPK ? sgd(DEFAULT_MOMENTUM) : ADAM;
    }

    /** Whether the top-k compressor does the momentum (DGC's momentum correction), the optimizer then being plain SGD. */
    public boolean correctsMomentumIn(Aggregation aggregation) {
        return kind == Kind.SGD && momentum > 0 && aggregation == Aggregation.TOPK;
    }

    /** The compression settings that go with this optimizer: the momentum moved into the top-k compressor where it is done there. */
    public Compression compression(Compression settings, Aggregation aggregation) {
        return settings.withMomentum(correctsMomentumIn(aggregation) ? momentum : 0);
    }

    /** DJL's optimizer, at the fixed {@code learningRate}. */
    public Optimizer build(float learningRate, Aggregation aggregation) {
        Tracker rate = Tracker.fixed(learningRate);
        return switch (kind) {
            case ADAM -> Optimizer.adam().optLearningRateTracker(rate).build();
            case SGD -> Optimizer.sgd().setLearningRateTracker(rate)
                    .optMomentum(correctsMomentumIn(aggregation) ? 0f : momentum).build();
        };
    }

    /** In words, e.g. "adam, lr 0.001" or "sgd, lr 0.05, momentum 0.9 (corrected in the top-k compressor, DGC)". */
    public String describe(float learningRate, Aggregation aggregation) {
        String lr = kind.id() + ", lr " + learningRate;
        if (kind == Kind.ADAM) {
            return lr;
        }
        return lr + ", momentum " + momentum + (correctsMomentumIn(aggregation) ? " (corrected in the top-k compressor, DGC)" : "");
    }

    /** {@code adam} or {@code sgd:0.9} ({@link #parse} reads it back). */
    public String toSpec() {
        return kind == Kind.ADAM ? kind.id() : kind.id() + ":" + momentum;
    }

    public static TrainOptimizer parse(String spec) {
        String s = spec == null ? "" : spec.trim();
        int colon = s.indexOf(':');
        Kind kind = Kind.named(colon < 0 ? s : s.substring(0, colon));
        return new TrainOptimizer(kind, colon >= 0 ? Float.parseFloat(s.substring(colon + 1))
                : kind == Kind.SGD ? DEFAULT_MOMENTUM : 0f);
    }
}
