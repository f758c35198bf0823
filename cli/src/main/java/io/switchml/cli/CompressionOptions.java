package io.switchml.cli;

import io.switchml.collectives.Compression;
import picocli.CommandLine.Option;

/** The settings of the compression baselines ({@code topk}, {@code qsgd}): shared by bench and train. */
final class CompressionOptions {
    @Option(names = "--topk-ratio", defaultValue = "0.01",
            description = "topk: share of the elements each worker sends (k = ratio x length, at least 1), with error"
                    + " feedback (default: ${DEFAULT-VALUE}, i.e. 1 %%).")
    double ratio;

    @Option(names = "--topk-warmup", defaultValue = "0",
            description = "topk: warm-up steps per tensor, during which the share sent falls exponentially from all to"
                    + " --topk-ratio (DGC's warm-up); 0 = none (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--qsgd-levels", defaultValue = "7",
            description = "qsgd: quantization levels s per sign; each element takes ceil(log2(2s+1)) bits"
                    + " (default: ${DEFAULT-VALUE}: 4 bits; 127: 8 bits).")
    int levels;

    @Option(names = "--qsgd-bucket", defaultValue = "512",
            description = "qsgd: elements per bucket, each scaled by its own norm (default: ${DEFAULT-VALUE}).")
    int bucket;

    @Option(names = "--qsgd-norm", defaultValue = "l2",
            description = "qsgd: the norm a bucket is scaled by: l2 (QSGD's analysis) or max (default: ${DEFAULT-VALUE}).")
    String norm;

    @Option(names = "--qsgd-seed", defaultValue = "1",
            description = "qsgd: seed of the stochastic rounding (default: ${DEFAULT-VALUE}).")
    long seed;

    Compression compression() {
        return new Compression(ratio, levels, bucket, Compression.Norm.named(norm), seed, warmup);
    }
}
