package io.switchml.cli;

import io.switchml.client.SwitchMLConfig;
import io.switchml.launch.PlotFiles;
import io.switchml.launch.Rack;
import io.switchml.launch.WorkerConnection;
import io.switchml.protocol.kernels.Kernels;
import io.switchml.spark.SparkTrainRunner;
import io.switchml.spark.SparkTrainingResult;
import io.switchml.training.Aggregation;
import io.switchml.training.Framework;
import io.switchml.training.TrainModel;
import io.switchml.training.TrainPlan;
import io.switchml.training.TrainPlot;
import io.switchml.training.TrainRunner;
import io.switchml.training.TrainWorker;
import io.switchml.training.TrainingSummary;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Data-parallel training of a Fashion-MNIST classifier with DJL or TensorFlow: all workers on this host (the
 * default), or, with {@code --rank}, one worker of a job spread over several hosts.
 */
@Command(name = "train", mixinStandardHelpOptions = true,
        description = {"Train a Fashion-MNIST classifier (DJL with PyTorch, or TensorFlow) data-parallel over worker processes, gradients summed"
                + " through the switch (or the ring / parameter-server / compression baselines).",
                "A list of --aggregation (and, with --rack, of --rate) trains once with each: the side-by-side comparison.",
                "Without --rank: an embedded switch (unless --controller) and --workers processes on this host.",
                "With --rank R: this process is rank R of a job over several hosts; start one per host with the same"
                        + " --workers, --controller and --job (switchml only), or let a launcher (srun, mpirun, torchrun)"
                        + " start them with --from-environment. Rank 0 gathers every rank's reports and prints the"
                        + " table (or JSON) a run on one host prints."})
final class TrainCommand implements Callable<Integer> {
    private static final String DEFAULT_JOB = "train";

    @Option(names = "--workers", defaultValue = "4", description = "Worker processes (default: ${DEFAULT-VALUE}).")
    int workers;

    @Mixin
    TrainOptions training;

    @Option(names = "--framework", defaultValue = "djl", description = "What trains the model: djl (DJL with PyTorch)"
            + " or tensorflow (TensorFlow Java, fixed learning rate; the perceptron only) (default: ${DEFAULT-VALUE}).")
    String framework;

    @Option(names = "--model", defaultValue = "mlp", description = "What is trained: mlp (the demo's 784-256-128-10"
            + " perceptron, 235 k parameters) or cnn (three 3x3 convolutions and two dense layers, 1.7 M parameters: 7x"
            + " the gradient per step; DJL only) (default: ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--controller", description = "HOST:PORT of a running switch's controller instead of an embedded switch.")
    String controller;

    @Option(names = "--rank", description = "Run only this rank here (multi-host training; needs --controller).")
    Integer rank;

    @Option(names = "--job", description = "With --rank: the job name all ranks join (default: " + DEFAULT_JOB
            + ", or the launcher's with --from-environment).")
    String job;

    @Option(names = "--from-environment", description = "This process is one rank of a job over several hosts, with its"
            + " rank, world size, job and switch from the environment as a launcher sets them (RANK, WORLD_SIZE or"
            + " SLURM_PROCID, SLURM_NTASKS; a job name from TORCHELASTIC_RUN_ID, MASTER_ADDR:MASTER_PORT or"
            + " SLURM_JOB_ID; SWITCHML_CONTROLLER, any SWITCHML_* setting); options given win. See docs/operating.md.")
    boolean fromEnvironment;

    @Spec
    CommandSpec command;

    @Option(names = "--format", defaultValue = "table", description = "table, or json: one object at the end (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(names = "--timeout", defaultValue = "PT0S", description = "Give up when training takes longer, ISO-8601;"
            + " PT0S (the default): no limit, as a launcher should not kill a job unless asked (a dead rank or switch"
            + " still ends the run within seconds).")
    Duration timeout;

    @Option(names = "--rack", description = "Train in the emulated rack (needs root): every worker in its own network"
            + " namespace behind links shaped with tc tbf to --rate, the switch in its own; removed afterwards.")
    boolean rack;

    @Option(names = "--rate", split = ",", description = "With --rack: the line rate of every link, a tc rate such as"
            + " 100mbit; a list (100mbit,1gbit) trains every aggregation at each rate, one rack after another.")
    List<String> rates;

    @Option(names = "--mtu", defaultValue = "9000", description = "With --rack: the MTU of every link (default: ${DEFAULT-VALUE}).")
    int mtu;

    @Option(names = "--switch-hosts", paramLabel = "K", description = "With --rack: run the switch on K servers of its"
            + " own, each behind one link shaped like a worker's; K >= 2 shards the job over them (as in switchml bench)."
            + " Without it, the switch sits on the bridge.")
    Integer switchHosts;

    @Option(names = "--target-accuracy", defaultValue = "0.82", description = "The test accuracy whose training time"
            + " (seconds_to_target, measured at epoch ends) every run reports and --plot draws (default: ${DEFAULT-VALUE}).")
    double target;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Draw the runs to this PNG: time to --target-accuracy"
            + " against aggregation, one bar per rate.")
    Path plot;

    @Option(names = "--spark-master", paramLabel = "URL", description = "Train as one Spark barrier stage of --workers"
            + " tasks instead of worker processes: local[N] (tasks as threads), local-cluster[W,C,MiB] or spark://HOST:PORT"
            + " (executors as JVMs); this process is the driver, and embeds the switch unless --controller.")
    String sparkMaster;

    @Option(names = "--spark-bind", defaultValue = "127.0.0.1", paramLabel = "ADDRESS", description = "With --spark-master:"
            + " where the driver and its embedded switch listen; executors must reach it (default: ${DEFAULT-VALUE}).")
    String sparkBind;

    @Option(names = "--spark-conf", paramLabel = "KEY=VALUE", description = "With --spark-master: a Spark setting (repeatable).")
    Map<String, String> sparkConf = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
        boolean json = "json".equals(format);
        if (!json && !"table".equals(format)) {
            throw new IllegalArgumentException("--format must be table or json, not " + format);
        }
        if (workers < 1) {
            throw new IllegalArgumentException("--workers must be at least 1");
        }
        Framework trainer = Framework.named(framework);
        TrainModel trained = TrainModel.named(model);
        List<TrainPlan> plans = training.plans().stream().map(p -> p.withFramework(trainer).withModel(trained)).toList();
        if (sparkMaster != null) {
            return runOnSpark(plans, json);
        }
        if (rank != null || fromEnvironment) {
            if (plans.size() > 1) {
                throw new IllegalArgumentException("--rank runs one rank of one job: give one --aggregation");
            }
            return runOneRank(plans.get(0), json);
        }
        List<Rack.Spec> racks = new ArrayList<>();
        if (rack) {
            if (rates == null || rates.isEmpty()) {
                throw new IllegalArgumentException("--rack needs --rate, e.g. --rate 100mbit");
            }
            if (controller != null) {
                throw new IllegalArgumentException("--rack starts its own switch in the rack; drop --controller");
            }
            if (switchHosts != null && switchHosts < 1) {
                throw new IllegalArgumentException("--switch-hosts must be at least 1, not " + switchHosts
                        + " (leave it out for the switch on the fabric)");
            }
            for (String r : rates) {
                racks.add(new Rack.Spec(workers, Rack.parseRate(r), mtu, 0, switchHosts == null ? 0 : switchHosts));
            }
            Rack.requireRoot(Rack.effectiveUid());
        } else if (rates != null) {
            throw new IllegalArgumentException("--rate needs --rack");
        } else if (switchHosts != null) {
            throw new IllegalArgumentException("--switch-hosts needs --rack");
        } else {
            racks.add(null);
        }
        if (!(target > 0 && target <= 1)) {
            throw new IllegalArgumentException("--target-accuracy must be in (0, 1], not " + target);
        }
        if (plot != null) {
            PlotFiles.requireWritable(plot);
        }
        PrintStream progress = json ? System.err : System.out;
        List<TrainingSummary> all = new ArrayList<>();
        for (Rack.Spec spec : racks) {
            for (TrainPlan plan : plans) {
                TrainingSummary summary = run(plan, workers, controller, timeout, progress, spec, target);
                all.add(summary);
                if (json) {
                    System.out.println(summary.toJson());
                    System.out.flush();
                }
            }
        }
        if (plot != null) {
            TrainPlot.write(all, plot);
            System.err.println("plot written to " + plot);
        }
        return all.stream().allMatch(TrainingSummary::parametersIdentical) ? 0 : 2;
    }

    /** Trains on this host and prints progress and the outcome in words; shared with {@code demo}. */
    static TrainingSummary run(TrainPlan plan, int workers, String controller, Duration timeout, PrintStream out)
            throws InterruptedException {
        return run(plan, workers, controller, timeout, out, null, TrainingSummary.DEFAULT_TARGET);
    }

    /** The same, in the rack when {@code rack} is not null. */
    static TrainingSummary run(TrainPlan plan, int workers, String controller, Duration timeout, PrintStream out,
                               Rack.Spec rack, double target) throws InterruptedException {
        // The embedded switch's job installs and removals are routine here; the epoch table is the news.
        System.setProperty("org.slf4j.simpleLogger.log.io.switchml",
                System.getProperty("org.slf4j.simpleLogger.log.io.switchml", "warn"));
        TrainRunner runner = new TrainRunner(new TrainRunner.Options(workers, plan, controller, timeout, rack, target),
                System.err);
        TrainingSummary summary = runner.run(e -> printEpoch(out, e));
        printOutcome(out, summary, rack == null ? "" : ", links at " + rack.describe(), target);
        return summary;
    }

    /** One row of the epoch table; its header above the first. */
    private static void printEpoch(PrintStream out, TrainingSummary.EpochSummary e) {
        if (e.epoch() == 1) { // after the start-up messages, right above the first row
            out.println(String.format(Locale.ROOT, "%5s %8s %9s %9s %10s %12s %8s", "epoch", "loss", "train_acc",
                    "test_acc", "images/s", "aggregation", "seconds"));
        }
        out.println(String.format(Locale.ROOT, "%5d %8.4f %8.2f%% %8.2f%% %10.0f %11.1f%% %8.1f", e.epoch(), e.loss(),
                100 * e.accuracy(), 100 * e.testAccuracy(), e.imagesPerSecond(), 100 * e.aggregationFraction(),
                e.seconds()));
    }

    private static String transportWords(String transport) {
        return switch (transport) {
            case "shared-memory" -> "its shared-memory port";
            case "udp" -> "UDP";
            default -> "its shared-memory port and UDP";
        };
    }

    /** The outcome in words below the table; {@code where} ends the first line (the rack's links, or nothing). */
    private static void printOutcome(PrintStream out, TrainingSummary summary, String where, double target) {
        out.println();
        out.println(String.format(Locale.ROOT, "test accuracy %.2f %% after %d epoch(s) with %d worker(s), aggregation %s: "
                        + "%.0f images/s, %.1f %% of step time aggregating, %.1f s in all",
                100 * summary.testAccuracy(), summary.epochCount(), summary.workers(), summary.aggregation(),
                summary.imagesPerSecond(), 100 * summary.aggregationFraction(), summary.wallSeconds()) + where
                + (summary.transport() == null ? "" : "; the workers reached the switch through "
                + transportWords(summary.transport()) + ", payload kernels " + Kernels.selected().name() + " on JDK "
                + Runtime.version().feature()));
        out.println(summary.epochsToTarget() > 0
                ? String.format(Locale.ROOT, "%.0f %% test accuracy reached after epoch %d, %.1f s of training", 100 * target,
                        summary.epochsToTarget(), summary.secondsToTarget())
                : String.format(Locale.ROOT, "%.0f %% test accuracy not reached in %d epoch(s)", 100 * target, summary.epochCount()));
        out.println(summary.parametersIdentical()
                ? "parameters bit-identical on all " + summary.workers() + " worker(s) (equal checksums)"
                : "PARAMETERS DIFFER BETWEEN WORKERS: the aggregation is broken");
    }

    /** {@code --spark-master}: every aggregation listed as one barrier stage each, the same table and JSON. */
    private int runOnSpark(List<TrainPlan> plans, boolean json) {
        if (rank != null || fromEnvironment || rack || rates != null || plot != null) {
            throw new IllegalArgumentException("--spark-master runs every rank as a Spark task on the cluster: drop --rank,"
                    + " --rack, --rate and --plot");
        }
        for (TrainPlan plan : plans) {
            if (plan.framework() != Framework.DJL) {
                throw new IllegalArgumentException("--spark-master trains with DJL; drop --framework " + plan.framework());
            }
            if (plan.aggregation().isNone()) {
                throw new IllegalArgumentException("--spark-master trains data-parallel: use --aggregation switchml, ring or ps");
            }
        }
        if (!(target > 0 && target <= 1)) {
            throw new IllegalArgumentException("--target-accuracy must be in (0, 1], not " + target);
        }
        System.setProperty("org.slf4j.simpleLogger.log.io.switchml",
                System.getProperty("org.slf4j.simpleLogger.log.io.switchml", "warn"));
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.spark",
                System.getProperty("org.slf4j.simpleLogger.log.org.apache.spark", "warn"));
        PrintStream out = json ? System.err : System.out;
        boolean identical = true;
        for (TrainPlan plan : plans) {
            SparkTrainingResult result = SparkTrainRunner.run(new SparkTrainRunner.Options(sparkMaster, workers, plan,
                    controller, sparkBind, timeout, target, sparkConf), System.err);
            TrainingSummary summary = result.summary();
            summary.epochs().forEach(e -> printEpoch(out, e));
            printOutcome(out, summary, ", Spark " + sparkMaster, target);
            if (json) {
                System.out.println(summary.toJson());
                System.out.flush();
            }
            identical &= summary.parametersIdentical();
        }
        return identical ? 0 : 2;
    }

    /**
     * One rank of a job over several hosts: its settings from the options and, with --from-environment, from what a
     * launcher put in the environment (the one parser, SwitchMLConfig); every rank's reports gathered to rank 0,
     * which prints what a run on one host prints.
     */
    private int runOneRank(TrainPlan plan, boolean json) throws Exception {
        if (!plan.aggregation().needsSwitch()) {
            throw new IllegalArgumentException("one rank of a job over several hosts works with --aggregation switchml;"
                    + " ring and ps run on one host (leave out --rank and --from-environment)");
        }
        SwitchMLConfig.Builder builder = SwitchMLConfig.builder().job(DEFAULT_JOB);
        if (fromEnvironment) {
            builder.environment(System.getenv());
        }
        // The tuning options given (--window, --set ...) win over the environment, as every option does.
        builder.settings(plan.config());
        if (rank != null) {
            builder.rank(rank);
        }
        if (!fromEnvironment || command.commandLine().getParseResult().hasMatchedOption("--workers")) {
            builder.workers(workers);
        }
        if (controller != null) {
            builder.controller(controller);
        } else if (!fromEnvironment) {
            throw new IllegalArgumentException("--rank needs --controller HOST:PORT of the switch every rank joins (or"
                    + " --from-environment with SWITCHML_CONTROLLER)");
        }
        if (job != null) {
            builder.job(job);
        }
        SwitchMLConfig config = builder.build();
        TrainPlan mine = plan;
        for (Map.Entry<String, String> e : config.toMap().entrySet()) {
            mine = mine.withConfig(e.getKey(), e.getValue());
        }
        TrainRunner.quietOfflineEngine();
        PrintStream progress = json ? System.err : System.out;
        progress.println("rank " + config.rank() + " of " + config.workers() + " in job '" + config.job() + "' at "
                + config.controller());
        TrainingSummary summary = new TrainWorker(mine, WorkerConnection.PeerExchange.STANDARD_STREAMS)
                .runGathered(line -> { }, target);
        if (summary == null) {
            progress.println("rank " + config.rank() + " done; rank 0 reports the run");
            return 0;
        }
        summary.epochs().forEach(e -> printEpoch(progress, e));
        printOutcome(progress, summary, ", ranks on several hosts", target);
        if (json) {
            System.out.println(summary.toJson());
            System.out.flush();
        }
        return summary.parametersIdentical() ? 0 : 2;
    }
}
