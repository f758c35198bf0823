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
 * <p>The learning rate follows a {@link Schedule}: fixed (Adam's default) or cosine annealing to 0
 * over the run (momentum SGD's default, as DGC and most SGD recipes decay the rate; without it the
 * last iterate of sparse updates is noisy, BENCHMARKS.md section 14).
 *
 * @param kind     which optimizer
 * @param momentum {@code sgd}: the momentum, in [0, 1); 0 for {@code adam}
 * @param schedule how the learning rate changes over the run
 */
public record TrainOptimizer(Kind kind, float momentum, Schedule schedule) {
    /** The momentum of {@code sgd} unless told otherwise (DGC's, and the usual one). */
    public static final float DEFAULT_MOMENTUM = 0.9f;
    public static final TrainOptimizer ADAM = new TrainOptimizer(Kind.ADAM, 0, Schedule.FIXED);

    /** Which optimizer. */
    public enum Kind {
        /** DJL's Adam, its default betas and epsilon. */
        ADAM(0.001f, Schedule.FIXED),
        /** SGD with momentum (heavy ball: u = m u + g, w = w - lr u). */
        SGD(0.1f, Schedule.COSINE);

        private final float defaultLearningRate;
        private final Schedule defaultSchedule;

        Kind(float defaultLearningRate, Schedule defaultSchedule) {
            this.defaultLearningRate = defaultLearningRate;
            this.defaultSchedule = defaultSchedule;
        }

        /** The learning rate a run uses when none is given. */
        public float defaultLearningRate() {
            return defaultLearningRate;
        }

        /** The schedule a run uses when none is given. */
        public Schedule defaultSchedule() {
            return defaultSchedule;
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

    /** How the learning rate changes over a run. */
    public enum Schedule {
        /** The learning rate throughout. */
        FIXED,
        /** From the learning rate down to 0 at the last step along a half cosine (SGDR without restarts). */
        COSINE;

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Schedule named(String name) {
            for (Schedule s : values()) {
                if (s.id().equalsIgnoreCase(name == null ? "" : name.trim())) {
                    return s;
                }
            }
            throw new IllegalArgumentException("unknown learning-rate schedule '" + name + "'; known: fixed, cosine");
        }
    }

    public TrainOptimizer {
        java.util.Objects.requireNonNull(kind, "kind");
        java.util.Objects.requireNonNull(schedule, "schedule");
        if (!(momentum >= 0 && momentum < 1)) {
            throw new IllegalArgumentException("momentum " + momentum + " must be in [0, 1), e.g. 0.9");
        }
        if (kind == Kind.ADAM && momentum != 0) {
            throw new IllegalArgumentException("adam takes no momentum (its betas are fixed); momentum is for sgd");
        }
    }

    /** Momentum SGD with its default schedule (cosine). */
    public static TrainOptimizer sgd(float momentum) {
        return new TrainOptimizer(Kind.SGD, momentum, Kind.SGD.defaultSchedule());
    }

    /** {@code kind} with {@code momentum} where it takes one (sgd), and {@code schedule} (null: the kind's default). */
    public static TrainOptimizer of(Kind kind, float momentum, Schedule schedule) {
        return new TrainOptimizer(kind, kind == Kind.ADAM ? 0 : momentum, schedule == null ? kind.defaultSchedule() : schedule);
    }

    /**
     * What an aggregation trains with when no optimizer is given: momentum SGD (0.9, cosine) where the algorithm
     * carries the momentum itself ({@code topk}), Adam (fixed rate) otherwise.
     */
    public static TrainOptimizer defaultFor(Aggregation aggregation) {
        return aggregation.correctsMomentum() ? sgd(DEFAULT_MOMENTUM) : ADAM;
    }

    /**
     * Whether the aggregation's compressor does the momentum (top-k: DGC's momentum correction), the optimizer then
     * being plain SGD.
     */
    public boolean correctsMomentumIn(Aggregation aggregation) {
        return kind == Kind.SGD && momentum > 0 && aggregation.correctsMomentum();
    }

    /** The compression settings that go with this optimizer: the momentum moved into the top-k compressor where it is done there. */
    public Compression compression(Compression settings, Aggregation aggregation) {
        return settings.withMomentum(correctsMomentumIn(aggregation) ? momentum : 0);
    }

    /** DJL's optimizer for a run of {@code steps} steps (what the cosine schedule spans). */
    public Optimizer build(float learningRate, Aggregation aggregation, int steps) {
        if (steps < 1) {
            throw new IllegalArgumentException("a run needs at least one step, not " + steps);
        }
        Tracker rate = tracker(learningRate, steps);
        return switch (kind) {
            case ADAM -> Optimizer.adam().optLearningRateTracker(rate).build();
            case SGD -> Optimizer.sgd().setLearningRateTracker(rate)
                    .optMomentum(correctsMomentumIn(aggregation) ? 0f : momentum).build();
        };
    }

    /** The learning rate of each step: {@code getNewValue(t)} for the t-th update, 1 for the first. */
    Tracker tracker(float learningRate, int steps) {
        return switch (schedule) {
            case FIXED -> Tracker.fixed(learningRate);
            case COSINE -> Tracker.cosine().setBaseValue(learningRate).optFinalValue(0).setMaxUpdates(steps).build();
        };
    }

    /**
     * In words, e.g. "adam, lr 0.001 fixed" or "sgd, lr 0.1 cosine, momentum 0.9 (corrected in the top-k compressor,
     * DGC)".
     */
    public String describe(float learningRate, Aggregation aggregation) {
        String lr = kind.id() + ", lr " + learningRate + " " + schedule.id();
        if (kind == Kind.ADAM) {
            return lr;
        }
        return lr + ", momentum " + momentum + (correctsMomentumIn(aggregation) ? " (corrected in the top-k compressor, DGC)" : "");
    }

    /** {@code kind:momentum:schedule}, e.g. {@code sgd:0.9:cosine} ({@link #parse} reads it back). */
    public String toSpec() {
        return kind.id() + ":" + momentum + ":" + schedule.id();
    }

    public static TrainOptimizer parse(String spec) {
        String[] parts = (spec == null ? "" : spec.trim()).split(":", -1);
        if (parts.length != 3) {
            throw new IllegalArgumentException("optimizer '" + spec + "' is not kind:momentum:schedule, e.g. sgd:0.9:cosine");
        }
        return new TrainOptimizer(Kind.named(parts[0]), Float.parseFloat(parts[1]), Schedule.named(parts[2]));
    }
}
