package io.switchml.cli;

import io.switchml.bench.ByteSize;
import io.switchml.djl.TensorFusion;
import io.switchml.training.Aggregation;
import io.switchml.training.TrainOptimizer;
import io.switchml.training.TrainPlan;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** How to train: shared by {@code train} and {@code demo}. */
final class TrainOptions {
    @Mixin
    TrainingRunOptions run;

    @Option(names = "--aggregation", defaultValue = "switchml", split = ",",
            description = "How gradients are summed: a registered all-reduce algorithm (`switchml algorithms`): switchml,"
                    + " ring, ps, topk (top-k with error feedback; trains with momentum SGD unless --optimizer adam), qsgd"
                    + " (stochastic quantization), ...; or none (one process alone); train (not demo) takes a list, e.g."
                    + " switchml,ring,topk,qsgd, and trains once with each (default: ${DEFAULT-VALUE}).")
    java.util.List<String> aggregation;

    @Option(names = "--optimizer", description = "What applies the aggregated gradient: adam (lr 0.001, fixed) or sgd (momentum"
            + " SGD, lr 0.1, cosine schedule). Default: sgd for topk, whose momentum is then done in the top-k compressor"
            + " (Deep Gradient Compression's momentum correction and factor masking; top-k's error feedback under Adam"
            + " loses accuracy), adam for the others.")
    String optimizer;

    @Option(names = "--momentum", defaultValue = "0.9", description = "sgd's momentum (default: ${DEFAULT-VALUE}).")
    float momentum;

    @Option(names = "--lr-schedule", description = "fixed, or cosine (annealed to 0 at the last step) (default: the"
            + " optimizer's: fixed for adam, cosine for sgd).")
    String schedule;

    @Option(names = "--fusion", defaultValue = "8MiB", description = "Tensor fusion threshold: gradients are all-reduced in buckets of at most this size (default: ${DEFAULT-VALUE}).")
    String fusion;

    @Mixin
    WorkerTuning tuning;

    @Mixin
    CompressionOptions compression;

    /** The plan of each aggregation listed, in order; each with its own default optimizer unless --optimizer. */
    java.util.List<TrainPlan> plans() {
        java.util.List<TrainPlan> all = new java.util.ArrayList<>();
        for (String a : aggregation) {
            all.add(plan(Aggregation.named(a)));
        }
        return all;
    }

    /** The plan of the first aggregation listed. */
    TrainPlan plan() {
        return plan(Aggregation.named(aggregation.get(0)));
    }

    private TrainPlan plan(Aggregation a) {
        TrainOptimizer.Kind kind = optimizer == null ? TrainOptimizer.defaultFor(a).kind() : TrainOptimizer.Kind.named(optimizer);
        if (kind == TrainOptimizer.Kind.ADAM && momentum != TrainOptimizer.DEFAULT_MOMENTUM) {
            throw new IllegalArgumentException("--momentum is for sgd; aggregation " + a + " trains with adam here"
                    + (optimizer == null ? " (give --optimizer sgd)" : ""));
        }
        TrainOptimizer o = TrainOptimizer.of(kind, momentum, schedule == null ? null : TrainOptimizer.Schedule.named(schedule));
        long bucket = ByteSize.parse(fusion);
        return new TrainPlan(tuning.settings(), a, run.epochs, run.batchSize, run.learningRate(kind.defaultLearningRate()),
                run.seed, run.dataDirectory(), run.limit, bucket == 0 ? TensorFusion.DEFAULT_BUCKET_BYTES : bucket,
                compression.compression(), o);
    }
}
