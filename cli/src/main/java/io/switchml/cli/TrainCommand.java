package io.switchml.cli;

import io.switchml.client.SwitchMLConfig;
import io.switchml.training.Aggregation;
import io.switchml.training.TrainPlan;
import io.switchml.training.TrainRunner;
import io.switchml.training.TrainWorker;
import io.switchml.training.TrainingSummary;
import io.switchml.bench.WorkerConnection;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * Data-parallel training of a Fashion-MNIST classifier with DJL: all workers on this host (the
 * default), or, with {@code --rank}, one worker of a job spread over several hosts.
 */
@Command(name = "train", mixinStandardHelpOptions = true,
        description = {"Train a Fashion-MNIST classifier (DJL, PyTorch) data-parallel over worker processes, gradients summed"
                + " through the switch (or the ring / parameter-server baselines).",
                "Without --rank: an embedded switch (unless --controller) and --workers processes on this host.",
                "With --rank R: this process is rank R of a job over several hosts; start one per host with the same"
                        + " --workers, --controller and --job (switchml only)."})
final class TrainCommand implements Callable<Integer> {
    @Option(names = "--workers", defaultValue = "4", description = "Worker processes (default: ${DEFAULT-VALUE}).")
    int workers;

    @Mixin
    TrainOptions training;

    @Option(names = "--controller", description = "HOST:PORT of a running switch's controller instead of an embedded switch.")
    String controller;

    @Option(names = "--rank", description = "Run only this rank here (multi-host training; needs --controller).")
    Integer rank;

    @Option(names = "--job", defaultValue = "train", description = "With --rank: the job name all ranks join (default: ${DEFAULT-VALUE}).")
    String job;

    @Option(names = "--format", defaultValue = "table", description = "table, or json: one object at the end (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(names = "--timeout", defaultValue = "PT1H", description = "Give up when training takes longer, ISO-8601 (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws Exception {
        boolean json = "json".equals(format);
        if (!json && !"table".equals(format)) {
            throw new IllegalArgumentException("--format must be table or json, not " + format);
        }
        if (workers < 1) {
            throw new IllegalArgumentException("--workers must be at least 1");
        }
        TrainPlan plan = training.plan();
        if (rank != null) {
            return runOneRank(plan);
        }
        PrintStream progress = json ? System.err : System.out;
        TrainingSummary summary = run(plan, workers, controller, timeout, progress);
        if (json) {
            System.out.println(summary.toJson());
        }
        return summary.parametersIdentical() ? 0 : 2;
    }

    /** Trains on this host and prints progress and the outcome in words; shared with {@code demo}. */
    static TrainingSummary run(TrainPlan plan, int workers, String controller, Duration timeout, PrintStream out)
            throws InterruptedException {
        // The embedded switch's job installs and removals are routine here; the epoch table is the news.
        System.setProperty("org.slf4j.simpleLogger.log.io.switchml",
                System.getProperty("org.slf4j.simpleLogger.log.io.switchml", "warn"));
        TrainRunner runner = new TrainRunner(new TrainRunner.Options(workers, plan, controller, timeout), System.err);
        TrainingSummary summary = runner.run(e -> {
            if (e.epoch() == 1) { // after the start-up messages, right above the first row
                out.println(String.format(Locale.ROOT, "%5s %8s %9s %9s %10s %12s %8s", "epoch", "loss", "train_acc",
                        "test_acc", "images/s", "aggregation", "seconds"));
            }
            out.println(String.format(Locale.ROOT, "%5d %8.4f %8.2f%% %8.2f%% %10.0f %11.1f%% %8.1f", e.epoch(), e.loss(),
                    100 * e.accuracy(), 100 * e.testAccuracy(), e.imagesPerSecond(), 100 * e.aggregationFraction(),
                    e.seconds()));
        });
        out.println();
        out.println(String.format(Locale.ROOT, "test accuracy %.2f %% after %d epoch(s) with %d worker(s), aggregation %s: "
                        + "%.0f images/s, %.1f %% of step time aggregating, %.1f s in all",
                100 * summary.testAccuracy(), summary.epochCount(), summary.workers(), summary.aggregation(),
                summary.imagesPerSecond(), 100 * summary.aggregationFraction(), summary.wallSeconds()));
        out.println(summary.parametersIdentical()
                ? "parameters bit-identical on all " + workers + " worker(s) (equal checksums)"
                : "PARAMETERS DIFFER BETWEEN WORKERS: the aggregation is broken");
        return summary;
    }

    private int runOneRank(TrainPlan plan) throws Exception {
        if (plan.aggregation() != Aggregation.SWITCHML) {
            throw new IllegalArgumentException("--rank (multi-host training) works with --aggregation switchml; ring and ps"
                    + " run on one host (leave out --rank)");
        }
        if (controller == null) {
            throw new IllegalArgumentException("--rank needs --controller HOST:PORT of the switch every rank joins");
        }
        TrainPlan mine = plan.withConfig(SwitchMLConfig.Key.RANK.property(), String.valueOf(rank))
                .withConfig(SwitchMLConfig.Key.WORKERS.property(), String.valueOf(workers))
                .withConfig(SwitchMLConfig.Key.CONTROLLER.property(), controller)
                .withConfig(SwitchMLConfig.Key.JOB.property(), job);
        TrainRunner.quietOfflineEngine();
        new TrainWorker(mine, WorkerConnection.PeerExchange.STANDARD_STREAMS).run(System.out::println);
        return 0;
    }
}
