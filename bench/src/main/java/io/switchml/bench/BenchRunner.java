package io.switchml.bench;

import io.switchml.client.SwitchMLConfig;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs a benchmark: an embedded switch (unless a controller is given), then for each worker count
 * n, n worker processes on this host that join one job and all-reduce every size. Rows come out
 * as soon as all workers have reported a size.
 */
public final class BenchRunner {
    public static final String ALGO = "switchml";

    private final BenchOptions options;
    private final PrintStream progress;

    public BenchRunner(BenchOptions options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    public List<BenchRow> run(Consumer<BenchRow> rows) throws InterruptedException {
        AggregationService embedded = null;
        String controller = options.controller();
        if (controller == null) {
            embedded = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0)
                    .portCount(options.switchPorts()).ingressDropProbability(options.dropProbability())
                    .egressDropProbability(options.dropProbability()), "127.0.0.1", 0);
            controller = "127.0.0.1:" + embedded.controllerPort();
            progress.println("embedded switch: controller " + controller + ", dataplane UDP ports "
                    + java.util.Arrays.toString(embedded.dataplane().ports())
                    + (options.dropProbability() > 0 ? ", dropping " + options.dropProbability() + " of packets and of results" : ""));
        }
        try {
            List<BenchRow> all = new ArrayList<>();
            for (int n : options.workers()) {
                all.addAll(runWorkers(controller, n, rows));
            }
            return all;
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    private List<BenchRow> runWorkers(String controller, int n, Consumer<BenchRow> rows) throws InterruptedException {
        Map<String, String> config = new LinkedHashMap<>(options.workerConfig());
        config.put(SwitchMLConfig.Key.CONTROLLER.property(), controller);
        config.put(SwitchMLConfig.Key.JOB.property(), "bench-" + n + "w-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        config.put(SwitchMLConfig.Key.WORKERS.property(), String.valueOf(n));
        WorkerPlan plan = new WorkerPlan(config, options.sizes(), options.iterations(), options.warmup(), options.verify(),
                options.type(), options.seed());
        long maxBytes = options.sizes().stream().mapToLong(Long::longValue).max().orElse(0);
        BlockingQueue<SizeReport> reports = new LinkedBlockingQueue<>();
        List<WorkerProcess> workers = new ArrayList<>();
        progress.println("starting " + n + " worker process(es)");
        try {
            for (int r = 0; r < n; r++) {
                WorkerPlan mine = plan.withConfig(SwitchMLConfig.Key.RANK.property(), String.valueOf(r));
                workers.add(WorkerProcess.start(r, mine, 2 * maxBytes + (256L << 20), reports, progress));
            }
            List<BenchRow> done = collect(n, workers, reports, rows);
            for (WorkerProcess w : workers) {
                Integer code = w.exitCode(30_000);
                if (code == null || code != 0) {
                    throw failure(w, code == null ? "did not exit" : "exited with code " + code);
                }
            }
            return done;
        } finally {
            workers.forEach(WorkerProcess::kill);
        }
    }

    private List<BenchRow> collect(int n, List<WorkerProcess> workers, BlockingQueue<SizeReport> reports,
                                   Consumer<BenchRow> rows) throws InterruptedException {
        Map<Long, List<SizeReport>> bySize = new HashMap<>();
        List<BenchRow> done = new ArrayList<>();
        long deadline = System.nanoTime() + options.workerTimeout().toNanos();
        while (done.size() < options.sizes().size()) {
            SizeReport report = reports.poll(200, TimeUnit.MILLISECONDS);
            if (report == null) {
                for (WorkerProcess w : workers) {
                    Integer code = w.alive() ? null : w.exitCode(1_000);
                    if (code != null && (code != 0 || reports.isEmpty())) {
                        throw failure(w, "exited with code " + code + " before reporting every size");
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new BenchException("the " + n + " workers did not finish within "
                            + options.workerTimeout().toSeconds() + " s");
                }
                continue;
            }
            List<SizeReport> forSize = bySize.computeIfAbsent(report.bytes(), b -> new ArrayList<>());
            forSize.add(report);
            if (forSize.size() == n) {
                BenchRow row = BenchRow.of(ALGO, n, options.type().name().toLowerCase(java.util.Locale.ROOT), forSize);
                done.add(row);
                rows.accept(row);
            }
        }
        return done;
    }

    private static BenchException failure(WorkerProcess w, String what) {
        return new BenchException("worker process " + w.rank() + " " + what + ":\n" + w.lastErrors());
    }
}
