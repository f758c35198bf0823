package io.switchml.cli;

import io.switchml.bench.BenchOptions;
import io.switchml.bench.BenchRow;
import io.switchml.bench.BenchRunner;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/** Benchmarks all-reduce with worker processes on this host. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmark all-reduce: an embedded switch (or --controller) and N worker processes on this host.")
final class BenchCommand implements Callable<Integer> {
    @Option(names = "--workers", split = ",", defaultValue = "4", description = "Worker count(s), e.g. 2,4 (default: ${DEFAULT-VALUE}).")
    List<Integer> workers;

    @Mixin
    SizeOptions sizes;

    @Mixin
    WorkerTuning tuning;

    @Option(names = "--format", defaultValue = "table", description = "table or json (one object per line) (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(names = "--controller", description = "HOST:PORT of a running switch's controller instead of an embedded switch.")
    String controller;

    @Option(names = "--switch-ports", defaultValue = "1", description = "UDP ports of the embedded switch (default: ${DEFAULT-VALUE}).")
    int switchPorts;

    @Option(names = "--timeout", defaultValue = "PT30M", description = "Give up when the workers take longer, ISO-8601 (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws InterruptedException {
        boolean json = "json".equals(format);
        if (!json && !"table".equals(format)) {
            throw new IllegalArgumentException("--format must be table or json, not " + format);
        }
        BenchOptions options = new BenchOptions(workers, sizes.bytes(), sizes.iterations, sizes.warmup, sizes.verify,
                sizes.dataType(), controller, tuning.settings(), switchPorts, sizes.seed, timeout);
        PrintStream out = System.out;
        if (!json) {
            out.println(BenchRow.tableHeader());
        }
        List<BenchRow> rows = new BenchRunner(options, System.err).run(row -> {
            out.println(json ? row.toJson() : row.toTableLine());
            out.flush();
        });
        boolean failed = rows.stream().anyMatch(r -> Boolean.FALSE.equals(r.verified()));
        if (failed) {
            System.err.println("VERIFICATION FAILED: some results differ from the exact expected value");
        }
        return failed ? 2 : 0;
    }
}
