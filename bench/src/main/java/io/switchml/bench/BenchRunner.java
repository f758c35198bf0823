package io.switchml.bench;

import io.switchml.client.HostLayout;
import io.switchml.client.SwitchMLConfig;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.EmbeddedHierarchy;
import io.switchml.launch.EmbeddedSwitch;
import io.switchml.launch.JobSecret;
import io.switchml.launch.PeerEndpoints;
import io.switchml.launch.Rack;
import io.switchml.launch.RackSwitch;
import io.switchml.launch.SwitchSettings;
import io.switchml.launch.WorkerGroup;
import io.switchml.launch.WorkerProcess;
import io.switchml.protocol.LeafRanks;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Runs a benchmark: an embedded switch (unless a controller is given or no algorithm needs one),
 * then for each worker count n and each algorithm, n worker processes on this host that all-reduce
 * every size with the same generated tensors. {@code switchml} workers join one job at the switch;
 * {@code ring} and {@code ps} workers bind their own ports, report them, and get every rank's from
 * here ({@link PeerEndpoints}). Rows come out as soon as all workers have reported a size.
 */
public final class BenchRunner {
    /** The algorithm of the rows when none is chosen. */
    public static final String ALGO = AllReduceAlgorithm.switchMl().id();

    private final BenchOptions options;
    private final PrintStream progress;
    private final boolean quiet;
    /** Leaf switches under a spine (docs/ARCHITECTURE.md section 9); 0: one switch. */
    private final int leaves;
    /** With leaves: each leaf's controller, leaf 0 first, once they run; rank r joins the leaf that serves it. */
    private List<String> leafControllers;
    /** The processes of the switches this run started, whose system calls rank 0 counts ({@code --syscalls}). */
    private List<Long> switchPids = List.of();

    /** Prints what happens (the switch, worker errors, a line per group and per row) on {@code progress}. */
    public BenchRunner(BenchOptions options, PrintStream progress) {
        this(options, progress, false);
    }

    /** @param quiet leave out the progress lines of each group and row ({@link BenchProgress}) */
    public BenchRunner(BenchOptions options, PrintStream progress, boolean quiet) {
        this(options, progress, quiet, 0);
    }

    /**
     * @param leaves run {@code switchml} through this many leaf switches under a spine (0: one switch); each worker
     *               count must be at least this
     */
    public BenchRunner(BenchOptions options, PrintStream progress, boolean quiet, int leaves) {
        if (leaves < 0 || leaves > 0 && options.controller() != null) {
            throw new IllegalArgumentException(leaves < 0 ? "--leaves must be at least 1, not " + leaves
                    : "--leaves starts its own spine and leaves; drop --controller");
        }
        Rack.Spec rack = options.rack();
        if (rack != null && rack.leaves() != leaves) {
            throw new IllegalArgumentException("the rack has " + rack.leaves() + " leaves but the bench runs " + leaves);
        }
        if (rack != null && leaves > 0 && !options.workers().equals(List.of(rack.workers()))) {
            throw new IllegalArgumentException("a rack of leaves places each worker in its leaf's rack for one worker"
                    + " count; give --workers one value, not " + options.workers());
        }
        if (leaves > 0 && options.switchHosts() > 1) {
            throw new IllegalArgumentException("--leaves and --switch-hosts are two different ways to scale out: a"
                    + " hierarchy of leaf switches, or one switch sharded over several; choose one");
        }
        for (int n : options.workers()) {
            if (n < leaves) {
                throw new IllegalArgumentException("--leaves " + leaves + " needs at least one worker per leaf; --workers "
                        + n + " has fewer");
            }
        }
        this.options = options;
        this.progress = progress;
        this.quiet = quiet;
        this.leaves = leaves;
    }

    /** Fails, saying why, where {@code --syscalls} cannot count here (no perf, or no right to trace). */
    public static void requireSyscallCounting() {
        String why = SyscallCounter.unavailableReason();
        if (why != null) {
            throw new BenchException("--syscalls: " + why);
        }
    }

    public List<BenchRow> run(Consumer<BenchRow> rows) throws InterruptedException {
        if (options.rack() != null) {
            return runInRack(rows);
        }
        if (leaves > 0 && options.algorithms().stream().anyMatch(AllReduceAlgorithm::needsSwitch)) {
            return runThroughLeaves(rows);
        }
        List<EmbeddedSwitch> embedded = new ArrayList<>();
        Map<String, String> switchSettings = Map.of();
        boolean needsSwitch = options.algorithms().stream().anyMatch(AllReduceAlgorithm::needsSwitch);
        try {
            if (options.controller() != null) {
                switchSettings = SwitchSettings.of(List.of(options.controller()));
            } else if (needsSwitch) {
                List<String> controllers = new ArrayList<>();
                for (int i = 0; i < Math.max(1, options.switchHosts()); i++) {
                    EmbeddedSwitch embeddedSwitch = EmbeddedSwitch.start("127.0.0.1", options.switchPorts(),
                            options.dropProbability());
                    embedded.add(embeddedSwitch);
                    controllers.add(embeddedSwitch.controller());
                    progress.println("embedded switch" + (options.switchHosts() > 1 ? " (shard " + i + ")" : "") + ": "
                            + embeddedSwitch.describe());
                }
                switchSettings = SwitchSettings.of(controllers);
            }
            switchPids = embedded.isEmpty() ? List.of() : List.of(ProcessHandle.current().pid()); // embedded: this JVM
            String topology = embedded.size() + "-shard";
            UnaryOperator<BenchRow> label = embedded.size() >= 2 ? row -> row.withTopology(topology)
                    : embedded.size() == 1 ? new TransportLabel(embedded.get(0)) : row -> row;
            return runAll(switchSettings, null, label, rows);
        } finally {
            embedded.forEach(EmbeddedSwitch::close);
        }
    }

    /** On loopback through an embedded spine and {@link #leaves} leaves; the rows say so in their topology. */
    private List<BenchRow> runThroughLeaves(Consumer<BenchRow> rows) throws InterruptedException {
        try (EmbeddedHierarchy hierarchy = EmbeddedHierarchy.start(leaves, options.switchPorts(), options.dropProbability(),
                progress)) {
            leafControllers = hierarchy.leafControllers();
            switchPids = List.of(ProcessHandle.current().pid());
            String topology = leaves + "-leaves";
            return runAll(SwitchSettings.of(List.of(leafControllers.get(0))), null, row -> row.withTopology(topology), rows);
        } finally {
            leafControllers = null;
        }
    }

    /** Every group of workers; {@code label} completes each row with where it ran (rate, topology). */
    private List<BenchRow> runAll(Map<String, String> switchSettings, Rack rack, UnaryOperator<BenchRow> label,
                                  Consumer<BenchRow> rows) throws InterruptedException {
        List<BenchRow> all = new ArrayList<>();
        BenchProgress status = new BenchProgress(quiet ? new PrintStream(OutputStream.nullOutputStream()) : progress,
                options, System::nanoTime);
        for (int n : options.workers()) {
            for (AllReduceAlgorithm algorithm : options.algorithms()) {
                status.groupStarted(algorithm, n);
                runWorkers(algorithm, switchSettings, rack, n, row -> {
                    BenchRow labelled = label.apply(row);
                    status.rowDone(labelled);
                    rows.accept(labelled);
                    all.add(labelled);
                });
            }
        }
        return all;
    }

    /**
     * The emulated rack: builds it, starts the switch ({@code switchml switch}) in its switch namespace
     * when an algorithm needs one, runs every worker in its own namespace, and removes it all afterwards.
     */
    private List<BenchRow> runInRack(Consumer<BenchRow> rows) throws InterruptedException {
        Rack.Spec spec = options.rack();
        try (Rack rack = Rack.create(spec)) {
            progress.println("emulated rack " + rack.prefix() + ": " + spec.describe());
            List<Process> switches = new ArrayList<>();
            try {
                Map<String, String> switchSettings = Map.of();
                if (options.algorithms().stream().anyMatch(AllReduceAlgorithm::needsSwitch)) {
                    if (leaves > 0) {
                        leafControllers = RackSwitch.startHierarchy(rack, options.switchPorts(), progress, switches);
                        switchSettings = SwitchSettings.of(List.of(leafControllers.get(0)));
                    } else {
                        switchSettings = SwitchSettings.of(RackSwitch.startAll(rack, options.switchPorts(), progress, switches));
                    }
                }
                // ip netns exec execs the JVM, so each process is a switch's JVM itself.
                switchPids = switches.stream().map(Process::pid).toList();
                long rate = spec.rateBps();
                String topology = spec.topology();
                return runAll(switchSettings, rack, row -> row.withRate(rate).withTopology(topology), rows);
            } finally {
                RackSwitch.stopAll(switches);
                leafControllers = null;
            }
        }
    }

    /**
     * Starts a benchmark worker ({@code endpoints} receives its {@code ENDPOINT} line: ring, ps) behind a
     * command prefix (the rack: {@code ip netns exec NS}, which execs the JVM in
     * the namespace, so this process is the worker's JVM itself).
     */
    private static WorkerProcess startWorker(List<String> prefix, int rank, WorkerPlan plan, long heapBytes,
                               Map<String, String> environment, BlockingQueue<SizeReport> reports, BlockingQueue<PeerEndpoints.Endpoint> endpoints,
                               PrintStream errors) {
        return WorkerProcess.start(prefix, rank, BenchWorker.class.getName(), List.of(plan.toJson()), List.of("-Xmx" + Math.max(256, heapBytes >> 20) + "m"),
                environment, !plan.algorithm().needsSwitch(), line -> {
                    SizeReport report = SizeReport.parse(line);
                    PeerEndpoints.Endpoint endpoint = report == null ? PeerEndpoints.Endpoint.parse(line) : null;
                    if (report != null) {
                        reports.add(report);
                    } else if (endpoint != null) {
                        endpoints.add(endpoint);
                    } else {
                        errors.println("[rank " + rank + "] " + line);
                    }
                }, errors);
    }

    /** One group: n worker processes of {@code algorithm}; each size's row goes to {@code rows} once all reported it. */
    private void runWorkers(AllReduceAlgorithm algorithm, Map<String, String> switchSettings, Rack rack, int n,
                            Consumer<BenchRow> rows) throws InterruptedException {
        Map<String, String> config = new LinkedHashMap<>(options.workerConfig());
        if (algorithm.needsSwitch()) {
            config.putAll(switchSettings);
            config.put(SwitchMLConfig.Key.JOB.property(), "bench-" + n + "w-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        }
        config.put(SwitchMLConfig.Key.WORKERS.property(), String.valueOf(n));
        if (rack != null && rack.spec().ranksPerHost() > 1) {
            // A host's ranks sum through one agent and send one contribution over its link (docs/ARCHITECTURE.md 16;
            // algorithms that sum through a switch: the others keep one worker per rank).
            config.putIfAbsent(SwitchMLConfig.Key.HOST_LAYOUT.property(), HostLayout.blocks(n, rack.spec().ranksPerHost()).toString());
        }
        // The job's secret goes to its ranks only: a stranger cannot take one of its seats.
        Map<String, String> environment = algorithm.needsSwitch() ? JobSecret.forWorkers(config) : Map.of();
        WorkerPlan plan = new WorkerPlan(config, options.sizes(), options.iterations(), options.warmup(), options.verify(),
                options.type(), options.seed(), algorithm, options.compression(), 0, options.sparsity(), options.syscalls(),
                algorithm.needsSwitch() ? switchPids : List.of());
        long maxBytes = options.sizes().stream().mapToLong(Long::longValue).max().orElse(0);
        BlockingQueue<SizeReport> reports = new LinkedBlockingQueue<>();
        BlockingQueue<PeerEndpoints.Endpoint> endpoints = new LinkedBlockingQueue<>();
        try (WorkerGroup workers = new WorkerGroup(options.workerTimeout())) {
            for (int r = 0; r < n; r++) {
                WorkerPlan mine = plan.withConfig(SwitchMLConfig.Key.RANK.property(), String.valueOf(r));
                if (algorithm.needsSwitch() && leafControllers != null) {
                    mine = mine.withConfig(SwitchMLConfig.Key.CONTROLLER.property(),
                            leafControllers.get(LeafRanks.leafOf(r, leafControllers.size(), n)));
                }
                List<String> prefix = List.of();
                if (rack != null) {
                    mine = mine.withConfig(SwitchMLConfig.Key.LOCAL_ADDRESS.property(), rack.workerAddress(r));
                    prefix = Rack.inNamespace(rack.workerNamespace(r));
                }
                // Input and output of the largest size, plus room: G1 keeps each as one humongous run of regions. The
                // compression baselines also keep a residual or scratch copy, a sum, and (verifying top-k) a replay.
                long heap = (algorithm.compressed() ? 7 : 3) * maxBytes + (256L << 20);
                workers.add(startWorker(prefix, r, mine, heap, environment, reports, endpoints, progress));
            }
            if (!algorithm.needsSwitch()) {
                workers.introduce(endpoints);
            }
            collect(algorithm, workers, reports, rows);
            workers.awaitSuccess(30_000);
        }
    }

    private void collect(AllReduceAlgorithm algorithm, WorkerGroup workers, BlockingQueue<SizeReport> reports,
                         Consumer<BenchRow> rows) throws InterruptedException {
        int n = workers.size();
        Map<Long, List<SizeReport>> bySize = new HashMap<>();
        int done = 0;
        while (done < options.sizes().size()) {
            SizeReport report = workers.next(reports, "reporting every size");
            List<SizeReport> forSize = bySize.computeIfAbsent(report.bytes(), b -> new ArrayList<>());
            forSize.add(report);
            if (forSize.size() == n) {
                BenchRow row = BenchRow.of(algorithm.id(), n, options.type().name().toLowerCase(java.util.Locale.ROOT), forSize);
                done++;
                rows.accept(row);
            }
        }
    }
}
