package io.switchml.cli;

import io.switchml.bench.ByteSize;
import io.switchml.djl.TensorFusion;
import io.switchml.training.Aggregation;
import io.switchml.training.TrainPlan;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** How to train: shared by {@code train} and {@code demo}. */
final class TrainOptions {
    @Mixin
    TrainingRunOptions run;

    @Option(names = "--aggregation", defaultValue = "switchml", split = ",",
            description = "How gradients are summed: switchml, ring, ps, topk (top-k with error feedback), qsgd (stochastic"
                    + " quantization), or none (one process alone); train (not demo) takes a list, e.g."
                    + " switchml,ring,topk,qsgd, and trains once with each (default: ${DEFAULT-VALUE}).")
    java.util.List<String> aggregation;

    @Option(names = "--fusion", defaultValue = "8MiB", description = "Tensor fusion threshold: gradients are all-reduced in buckets of at most this size (default: ${DEFAULT-VALUE}).")
    String fusion;

    @Mixin
    WorkerTuning tuning;

    @Mixin
    CompressionOptions compression;

    /** The plan of each aggregation listed, in order. */
    java.util.List<TrainPlan> plans() {
        java.util.List<TrainPlan> all = new java.util.ArrayList<>();
        TrainPlan first = plan();
        for (String a : aggregation) {
            all.add(first.withAggregation(Aggregation.named(a)));
        }
        return all;
    }

    /** The plan of the first aggregation listed. */
    TrainPlan plan() {
        long bucket = ByteSize.parse(fusion);
        return new TrainPlan(tuning.settings(), Aggregation.named(aggregation.get(0)), run.epochs, run.batchSize,
                run.learningRate, run.seed, run.dataDirectory(), run.limit,
                bucket == 0 ? TensorFusion.DEFAULT_BUCKET_BYTES : bucket, compression.compression());
    }
}
