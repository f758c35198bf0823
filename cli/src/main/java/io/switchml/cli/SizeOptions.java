package io.switchml.cli;

import io.switchml.bench.ByteSize;
import io.switchml.bench.Sparsity;
import io.switchml.protocol.DataType;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;

/** What to all-reduce and how often: shared by bench and worker. */
final class SizeOptions {
    @Option(names = "--size", split = ",", defaultValue = "64MiB",
            description = "Tensor size(s) in bytes with units (4KiB, 64MiB, 1GB); FROM:TO doubles from FROM to TO; repeatable (default: ${DEFAULT-VALUE}).")
    List<String> sizes;

    @Option(names = "--iters", defaultValue = "10", description = "Timed all-reduces per size (default: ${DEFAULT-VALUE}).")
    int iterations;

    @Option(names = "--warmup", defaultValue = "2", description = "Untimed all-reduces per size first (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--verify", description = "Check every result against the exact expected value and across workers.")
    boolean verify;

    @Option(names = "--type", defaultValue = "float32", description = "Element type: float32 or int32 (default: ${DEFAULT-VALUE}).")
    String type;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the generated tensors (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--sparsity", defaultValue = "1", paramLabel = "P",
            description = "Fraction of the tensors' rows of 2048 elements (8 KiB of float32) that are not zero, the same"
                    + " tensors for every algorithm; the rest are zero, as in embedding gradients (default:"
                    + " ${DEFAULT-VALUE}, dense).")
    double sparsity;

    @Option(names = "--sparse-rows", defaultValue = "same", paramLabel = "same|per-rank",
            description = "With --sparsity: the same non-zero rows at every rank, or each rank its own (workers that"
                    + " touched different rows) (default: ${DEFAULT-VALUE}).")
    String sparseRows;

    Sparsity sparsity() {
        return new Sparsity(sparsity, Sparsity.perRank(sparseRows));
    }

    List<Long> bytes() {
        List<Long> all = new ArrayList<>();
        for (String s : sizes) {
            for (long b : ByteSize.parseList(s)) {
                if (b < 4 || b % 4 != 0) {
                    throw new IllegalArgumentException("size " + s + " = " + b + " B is not a positive multiple of 4 bytes (one element)");
                }
                all.add(b);
            }
        }
        return all;
    }

    DataType dataType() {
        switch (type.toLowerCase(java.util.Locale.ROOT)) {
            case "float32":
            case "float":
                return DataType.FLOAT32;
            case "int32":
            case "int":
                return DataType.INT32;
            default:
                throw new IllegalArgumentException("--type must be float32 or int32, not " + type);
        }
    }
}
