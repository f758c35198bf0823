package io.switchml.cli;

import io.switchml.bench.ByteSize;
import io.switchml.djl.TensorFusion;
import io.switchml.training.Aggregation;
import io.switchml.training.FashionMnist;
import io.switchml.training.TrainPlan;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/** How to train: shared by {@code train} and {@code demo}. */
final class TrainOptions {
    @Option(names = "--epochs", defaultValue = "3", description = "Passes over the training data (default: ${DEFAULT-VALUE}).")
    int epochs;

    @Option(names = "--batch-size", defaultValue = "64",
            description = "Images per step and worker; the global batch is workers times larger (default: ${DEFAULT-VALUE}).")
    int batchSize;

    @Option(names = "--lr", defaultValue = "0.001", description = "Adam's learning rate (default: ${DEFAULT-VALUE}).")
    float learningRate;

    @Option(names = "--aggregation", defaultValue = "switchml", split = ",",
            description = "How gradients are summed: switchml, ring, ps, topk (top-k with error feedback), qsgd (stochastic"
                    + " quantization), or none (one process alone); train (not demo) takes a list, e.g."
                    + " switchml,ring,topk,qsgd, and trains once with each (default: ${DEFAULT-VALUE}).")
    java.util.List<String> aggregation;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the data order and of rank 0's initial parameters (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--data", description = "Directory of the Fashion-MNIST IDX files (default: /usr/share/datasets/fashion-mnist,"
            + " from the Debian package dataset-fashion-mnist).")
    Path data;

    @Option(names = "--limit", defaultValue = "0", description = "Train on the first N training images only; 0 = all 60000 (default: ${DEFAULT-VALUE}).")
    int limit;

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
        return new TrainPlan(tuning.settings(), Aggregation.named(aggregation.get(0)), epochs, batchSize, learningRate, seed,
                data == null ? FashionMnist.DEFAULT_DIRECTORY : data, limit, bucket == 0 ? TensorFusion.DEFAULT_BUCKET_BYTES : bucket,
                compression.compression());
    }
}
