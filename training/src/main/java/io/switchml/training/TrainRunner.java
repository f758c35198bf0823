package io.switchml.training;

import ai.djl.engine.Engine;
import io.switchml.client.HostLayout;
import io.switchml.client.SwitchMLConfig;
import io.switchml.launch.EmbeddedSwitch;
import io.switchml.launch.JobSecret;
import io.switchml.launch.ResultDelivery;
import io.switchml.launch.PeerEndpoints;
import io.switchml.launch.Rack;
import io.switchml.launch.RackSwitch;
import io.switchml.launch.SwitchSettings;
import io.switchml.launch.WorkerGroup;
import io.switchml.launch.WorkerProcess;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;

/**
 * Runs a data-parallel training job on this host: an embedded switch (for {@code switchml}, unless a
 * controller is given), then one {@link TrainWorker} process per rank; epoch summaries come out as
 * soon as every rank has reported the epoch.
 */
public final class TrainRunner {
    /** JVM options of the worker processes: PyTorch from the Maven jar only, one thread per worker process. */
    static final List<String> WORKER_JVM_OPTIONS = List.of("-Xmx1g", "-Dai.djl.offline=true",
            "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1",
            "-Dorg.slf4j.simpleLogger.log.ai.djl=error");
    /** TensorFlow's native start-up lines (CPU features, oneDNN) are INFO: warnings and errors only. */
    static final Map<String, String> TENSORFLOW_ENVIRONMENT = Map.of("TF_CPP_MIN_LOG_LEVEL", "1");
    /**
     * Notices the engines print at start-up about their own internals, not the user's business: PyTorch's (DJL's JNI uses
     * a deprecated guard), and TensorFlow's logging set-up and graph optimizer, which TF_CPP_MIN_LOG_LEVEL leaves on.
     */
    private static final List<String> ENGINE_NOTICES = List.of("AutoNonVariableTypeMode is deprecated",
            "All log messages before absl::InitializeLog() is called", "mlir_graph_optimization_pass.cc");

    /**
     * @param controller {@code HOST:PORT} of a running switch's controller, or null to embed one
     * @param timeout    how long the whole run may take
     * @param rack       run in the emulated rack ({@link Rack}, needs root): every worker in its own network
     *                   namespace behind links shaped to the rack's rate, the switch in its own; null: this host's
     *                   loopback
     * @param target     the test accuracy whose time the summary reports ({@link TrainingSummary#secondsToTarget()})
     */
    public record Options(int workers, TrainPlan plan, String controller, Duration timeout, Rack.Spec rack, double target) {
        public Options(int workers, TrainPlan plan, String controller, Duration timeout) {
            this(workers, plan, controller, timeout, null, TrainingSummary.DEFAULT_TARGET);
        }

        public Options {
            if (rack != null && controller != null) {
                throw new IllegalArgumentException("the rack starts its own switch in its switch namespace; drop --controller");
            }
            if (rack != null && rack.workers() < workers) {
                throw new IllegalArgumentException("the rack has " + rack.workers() + " worker namespaces for " + workers
                        + " workers");
            }
        }
    }

    private final Options options;
    private final PrintStream progress;

    public TrainRunner(Options options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    public TrainingSummary run(Consumer<TrainingSummary.EpochSummary> epochs) throws InterruptedException {
        int n = options.workers();
        Aggregation aggregation = options.plan().aggregation();
        if (aggregation.isNone() && n != 1) {
            throw new IllegalArgumentException("--aggregation none trains one process alone; use --workers 1");
        }
        if (options.plan().framework() == Framework.TENSORFLOW) {
            TensorFlowWorker.requireSupported(options.plan());
        }
        FashionMnist.requirePresent(options.plan().data());
        quietOfflineEngine();
        // Load the engine here once, so a broken install fails before any worker starts, and the native
        // library is unpacked from its jar by one process rather than by every worker at once.
        if (options.plan().framework() == Framework.TENSORFLOW) {
            progress.println("engine: " + TensorFlowWorker.engine());
        } else {
            Engine engine = Engine.getEngine("PyTorch");
            progress.println("engine: " + engine.getEngineName() + " " + engine.getVersion());
        }
        if (options.rack() != null) {
            return runInRack(epochs);
        }
        EmbeddedSwitch embedded = null;
        String controller = options.controller();
        if (aggregation.needsSwitch() && controller == null) {
            embedded = EmbeddedSwitch.start("127.0.0.1", 1);
            controller = embedded.controller();
            progress.println("embedded switch: " + embedded.describe());
        }
        try {
            ResultDelivery before = embedded == null ? null : embedded.delivery();
            TrainingSummary summary = train(SwitchSettings.of(controller == null ? List.of() : List.of(controller)), null,
                    epochs);
            return before == null ? summary : summary.withTransport(embedded.delivery().transportSince(before));
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    /** The emulated rack: built, the switch started in its namespace for {@code switchml}, removed afterwards. */
    private TrainingSummary runInRack(Consumer<TrainingSummary.EpochSummary> epochs) throws InterruptedException {
        try (Rack rack = Rack.create(options.rack())) {
            progress.println("emulated rack " + rack.prefix() + ": " + options.rack().describe());
            List<Process> switches = new ArrayList<>();
            try {
                List<String> controllers = options.plan().aggregation().needsSwitch()
                        ? RackSwitch.startAll(rack, 1, progress, switches) : List.of();
                return train(SwitchSettings.of(controllers), rack, epochs);
            } finally {
                RackSwitch.stopAll(switches);
            }
        }
    }

    /**
     * Call before DJL loads: nothing may be downloaded at run time (the native library comes from the
     * pytorch-native-cpu jar), and DJL's warning that it found no CUDA is expected on a CPU-only host.
     * Settings given with -D are kept.
     */
    public static void quietOfflineEngine() {
        System.setProperty("ai.djl.offline", System.getProperty("ai.djl.offline", "true"));
        System.setProperty("org.slf4j.simpleLogger.log.ai.djl", System.getProperty("org.slf4j.simpleLogger.log.ai.djl", "error"));
    }

    /** @param switchSettings where {@code switchml} workers find the switch ({@code switchml.controller} or {@code .shards}) */
    private TrainingSummary train(Map<String, String> switchSettings, Rack rack,
                                  Consumer<TrainingSummary.EpochSummary> epochs) throws InterruptedException {
        int n = options.workers();
        TrainPlan plan = options.plan().withConfig(SwitchMLConfig.Key.WORKERS.property(), String.valueOf(n));
        if (plan.aggregation().needsSwitch()) {
            for (Map.Entry<String, String> setting : switchSettings.entrySet()) {
                plan = plan.withConfig(setting.getKey(), setting.getValue());
            }
            plan = plan
                    .withConfig(SwitchMLConfig.Key.JOB.property(), "train-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
            if (rack == null && n > 1 && !plan.config().containsKey(SwitchMLConfig.Key.HOST_LAYOUT.property())) {
                // Every rank runs on this host: they sum here, through one agent, as the host's one contribution
                // (docs/ARCHITECTURE.md section 16); an empty hostLayout setting keeps one worker per rank.
                plan = plan.withConfig(SwitchMLConfig.Key.HOST_LAYOUT.property(), HostLayout.blocks(n, n).toString());
            }
        }
        boolean exchangesEndpoints = plan.aggregation().exchangesEndpoints();
        BlockingQueue<EpochReport> reports = new LinkedBlockingQueue<>();
        BlockingQueue<FinalReport> finals = new LinkedBlockingQueue<>();
        BlockingQueue<PeerEndpoints.Endpoint> endpoints = new LinkedBlockingQueue<>();
        PrintStream workerErrors = new PrintStream(progress, true, java.nio.charset.StandardCharsets.UTF_8) {
            @Override
            public void println(String line) {
                if (ENGINE_NOTICES.stream().noneMatch(line::contains)) {
                    super.println(line);
                }
            }
        };
        long start = System.nanoTime();
        progress.println("starting " + n + " training worker process(es), " + plan.framework() + ", model " + plan.model()
                + " (" + plan.model().parameters() + " parameters), aggregation "
                + plan.aggregation() + ", optimizer "
                + plan.optimizer().describe(plan.learningRate(), plan.aggregation()));
        Map<String, String> environment = new HashMap<>(plan.framework() == Framework.TENSORFLOW ? TENSORFLOW_ENVIRONMENT : Map.of());
        if (plan.aggregation().needsSwitch()) {
            // The job's secret goes to its ranks only: a stranger cannot take one of its seats.
            environment.putAll(JobSecret.forWorkers(plan.config()));
        }
        try (WorkerGroup workers = new WorkerGroup(options.timeout())) {
            for (int r = 0; r < n; r++) {
                int rank = r;
                TrainPlan mine = plan.withConfig(SwitchMLConfig.Key.RANK.property(), String.valueOf(r));
                List<String> prefix = List.of();
                if (rack != null) {
                    mine = mine.withConfig(SwitchMLConfig.Key.LOCAL_ADDRESS.property(), rack.workerAddress(r));
                    prefix = Rack.inNamespace(rack.workerNamespace(r));
                }
                workers.add(WorkerProcess.start(prefix, r, TrainWorker.class.getName(), List.of(mine.toJson()), WORKER_JVM_OPTIONS,
                        environment, exchangesEndpoints, line -> route(rank, line, reports, finals, endpoints), workerErrors));
            }
            if (exchangesEndpoints) {
                workers.introduce(endpoints);
            }
            List<TrainingSummary.EpochSummary> done = new ArrayList<>();
            Map<Integer, List<EpochReport>> byEpoch = new HashMap<>();
            while (done.size() < plan.epochs()) {
                EpochReport report = workers.next(reports, "reporting every epoch");
                List<EpochReport> forEpoch = byEpoch.computeIfAbsent(report.epoch(), e -> new ArrayList<>());
                forEpoch.add(report);
                if (forEpoch.size() == n) {
                    TrainingSummary.EpochSummary summary = TrainingSummary.EpochSummary.of(forEpoch);
                    done.add(summary);
                    epochs.accept(summary);
                }
            }
            Map<Integer, FinalReport> last = new LinkedHashMap<>();
            while (last.size() < n) {
                FinalReport f = workers.next(finals, "reporting their final parameters");
                last.put(f.rank(), f);
            }
            workers.awaitSuccess(30_000);
            List<EpochReport> all = byEpoch.values().stream().flatMap(List::stream).toList();
            return TrainingSummary.of(plan.aggregation().id(), n, plan.epochs(), plan.batchSize(), all, last.values(),
                    (System.nanoTime() - start) / 1e9, rack == null ? null : options.rack().rateBps(), options.target())
                    .withModel(plan.model());
        }
    }

    private void route(int rank, String line, BlockingQueue<EpochReport> reports, BlockingQueue<FinalReport> finals,
                       BlockingQueue<PeerEndpoints.Endpoint> endpoints) {
        EpochReport epoch = EpochReport.parse(line);
        if (epoch != null) {
            reports.add(epoch);
            return;
        }
        FinalReport last = FinalReport.parse(line);
        if (last != null) {
            finals.add(last);
            return;
        }
        PeerEndpoints.Endpoint endpoint = PeerEndpoints.Endpoint.parse(line);
        if (endpoint != null) {
            endpoints.add(endpoint);
        } else {
            progress.println("[rank " + rank + "] " + line);
        }
    }
}
