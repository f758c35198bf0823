package io.switchml.cli;

import io.switchml.bench.BenchOptions;
import io.switchml.bench.BenchRow;
import io.switchml.bench.BenchRunner;
import io.switchml.bench.ByteSize;
import io.switchml.protocol.DataType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The main job for now: an embedded switch and worker processes all-reduce tensors the size of
 * real gradients, verified exactly, and a readable summary.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Start an embedded switch and worker processes; all-reduce gradient-sized tensors through it, verified.")
final class DemoCommand implements Callable<Integer> {
    /** Gradient tensors of familiar models, in bytes of float32. */
    private static final Map<String, Long> GRADIENTS = new LinkedHashMap<>();

    static {
        GRADIENTS.put("ResNet-50 fc bias (1000)", 1000L * 4);
        GRADIENTS.put("ResNet-50 conv 3x3x64x64", 3L * 3 * 64 * 64 * 4);
        GRADIENTS.put("ResNet-50 conv 3x3x256x256", 3L * 3 * 256 * 256 * 4);
        GRADIENTS.put("ResNet-50 fc weight 2048x1000", 2048L * 1000 * 4);
        GRADIENTS.put("PyTorch DDP bucket (25 MiB)", 25L << 20);
    }

    @Option(names = "--workers", defaultValue = "4", description = "Worker processes (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--iters", defaultValue = "5", description = "Timed all-reduces per tensor (default: ${DEFAULT-VALUE}).")
    int iterations;

    @Override
    public Integer call() throws InterruptedException {
        System.out.println("switchml demo: an embedded software switch and " + workers + " worker processes on this host");
        System.out.println("all-reduce (SUM) of float32 gradient tensors, each checked bit for bit against the exact result\n");
        BenchOptions options = new BenchOptions(List.of(workers), new ArrayList<>(GRADIENTS.values()), iterations, 1, true,
                DataType.FLOAT32, null, Map.of(), 1, 1, Duration.ofMinutes(10));
        System.out.println(String.format(Locale.ROOT, "%-32s %10s %10s %12s %12s %8s %9s",
                "tensor", "size", "median_ms", "goodput_Gbps", "ATE/s", "retrans", "verified"));
        List<BenchRow> rows = new BenchRunner(options, System.err).run(row -> System.out.println(String.format(Locale.ROOT,
                "%-32s %10s %10.3f %12.3f %12.3e %8d %9s", name(row.bytes()), ByteSize.format(row.bytes()), row.medianMs(),
                row.algbwGbps(), row.atePerSecond(), row.retransmissions(), Boolean.TRUE.equals(row.verified()) ? "yes" : "NO")));
        boolean allExact = rows.stream().allMatch(r -> Boolean.TRUE.equals(r.verified()));
        System.out.println();
        System.out.println(allExact
                ? "All " + rows.size() + " tensors: every worker got the exact expected sum, bit-identical across all " + workers + " workers."
                : "SOME RESULTS WERE WRONG: see the rows marked NO.");
        return allExact ? 0 : 2;
    }

    private static String name(long bytes) {
        return GRADIENTS.entrySet().stream().filter(e -> e.getValue() == bytes).map(Map.Entry::getKey).findFirst()
                .orElse(ByteSize.format(bytes));
    }
}
