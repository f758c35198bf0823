package io.switchml.cli;

import io.switchml.training.FashionMnist;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/** The training run's own options, shared by {@code train} (DJL) and {@code torch-train} (PyTorch). */
final class TrainingRunOptions {
    @Option(names = "--epochs", defaultValue = "3", description = "Passes over the training data (default: ${DEFAULT-VALUE}).")
    int epochs;

    @Option(names = "--batch-size", defaultValue = "64",
            description = "Images per step and worker; the global batch is workers times larger (default: ${DEFAULT-VALUE}).")
    int batchSize;

    @Option(names = "--lr", description = "Learning rate (default: the optimizer's: 0.001 for Adam, 0.1 for momentum SGD).")
    Float learningRate;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the data order and of rank 0's initial parameters (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--data", description = "Directory of the Fashion-MNIST IDX files (default: /usr/share/datasets/fashion-mnist,"
            + " from the Debian package dataset-fashion-mnist).")
    Path data;

    @Option(names = "--limit", defaultValue = "0", description = "Train on the first N training images only; 0 = all 60000 (default: ${DEFAULT-VALUE}).")
    int limit;

    /** {@code --lr}, or {@code fallback} when not given. */
    float learningRate(float fallback) {
        if (learningRate != null && !(learningRate > 0)) {
            throw new IllegalArgumentException("--lr must be positive, not " + learningRate);
        }
        return learningRate == null ? fallback : learningRate;
    }

    /** {@code --data}, or the Debian package's directory. */
    Path dataDirectory() {
        return data == null ? FashionMnist.DEFAULT_DIRECTORY : data;
    }
}
