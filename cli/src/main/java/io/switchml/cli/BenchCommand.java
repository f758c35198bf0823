package io.switchml.cli;

import io.switchml.bench.BenchFormat;
import io.switchml.bench.BenchOptions;
import io.switchml.bench.BenchPlot;
import io.switchml.bench.BenchRow;
import io.switchml.bench.BenchRunner;
import io.switchml.client.SwitchMLConfig;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.PlotFiles;
import io.switchml.launch.Rack;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** Benchmarks all-reduce with worker processes on this host. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmark all-reduce: N worker processes on this host, through an embedded switch (or --controller)"
                + " and/or the ring, parameter-server and gradient-compression (topk, qsgd) baselines.")
final class BenchCommand implements Callable<Integer> {
    @Option(names = "--algo", split = ",", defaultValue = "switchml", completionCandidates = AlgorithmsCommand.Names.class,
            description = "Algorithm(s) measured in the same run with the same tensors, of the registered: ${COMPLETION-CANDIDATES}"
                    + " (switchml: in-network aggregation; ring and ps: over TCP; topk and qsgd: compressed, all-gathered"
                    + " over the ring's TCP links; `switchml algorithms` says what each does), e.g. switchml,ring,topk,qsgd"
                    + " (default: ${DEFAULT-VALUE}). Only switchml needs a switch.")
    List<String> algorithms;

    @Mixin
    CompressionOptions compression;

    @Option(names = "--topk-momentum", defaultValue = "0",
            description = "topk: DGC's momentum correction: each worker accumulates a velocity u = m u + g instead of g,"
                    + " and clears it where it sent (what train --aggregation topk does with its default momentum SGD);"
                    + " 0 = plain error feedback (default: ${DEFAULT-VALUE}).")
    double topKMomentum;

    @Option(names = "--workers", split = ",", defaultValue = "4", description = "Worker count(s), e.g. 2,4 (default: ${DEFAULT-VALUE}).")
    List<Integer> workers;

    @Mixin
    SizeOptions sizes;

    @Mixin
    WorkerTuning tuning;

    @Option(names = "--format", defaultValue = "table", description = "table, json (one object per line) or csv (a header,"
            + " then one line per row; the JSON fields in the same order) (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Also draw the run to this PNG: algbw against tensor"
            + " size (one line per algorithm and worker count) and against worker count at the largest size.")
    Path plot;

    @Option(names = "--quiet", description = "No progress lines on standard error (a line per algorithm and worker count"
            + " started, and per row with the time elapsed and an estimate of the time left).")
    boolean quiet;

    @Option(names = "--syscalls", description = "Count the system calls each worker's process and the switch's made during"
            + " the timed all-reduces, with perf's raw_syscalls tracepoint (needs perf, Debian's linux-perf, and root or"
            + " kernel.perf_event_paranoid <= 1); rows give them per all-reduce: a worker's (the mean) / the switch's"
            + " (none for a running switch, --controller).")
    boolean syscalls;

    @Option(names = "--controller", description = "HOST:PORT of a running switch's controller instead of an embedded switch.")
    String controller;

    @Option(names = "--switch-ports", defaultValue = "1", description = "UDP ports of the embedded switch (default: ${DEFAULT-VALUE}).")
    int switchPorts;

    @Option(names = "--drop", defaultValue = "0",
            description = "Probability that the embedded switch drops each packet on arrival and each result on departure"
                    + " (its drop simulator), e.g. 0.001 (default: ${DEFAULT-VALUE}). With --rack: probability that"
                    + " nftables drops each UDP packet on every receiving side (each worker, the switch), in [0, 1).")
    double drop;

    @Option(names = "--rack", description = "Run in the emulated rack (needs root): the switch and every worker in their"
            + " own network namespace, joined through a bridge by veth links shaped with tc tbf to --rate; the ring and"
            + " ps baselines cross the same links. Every row carries rate_bps and line_rate_fraction. Removes"
            + " everything afterwards.")
    boolean rack;

    @Option(names = "--rate", description = "With --rack: the line rate of every link, a tc rate such as 500mbit, 1gbit"
            + " (required with --rack).")
    String rate;

    @Option(names = "--switch-hosts", paramLabel = "K", description = "With --rack: run the switch on K servers of its"
            + " own, each behind one link shaped at --rate like a worker's (a software switch on a server); K >= 2 shards"
            + " one job over them (switchml.shards: worker thread t to shard t mod K, each link carrying n x S/K); without"
            + " it, the switch sits on the bridge (the fabric, as a switch chip). Without --rack: K embedded switches on"
            + " loopback, the job sharded over them.")
    Integer switchHosts;

    @Option(names = "--leaves", paramLabel = "L", description = "Aggregate through L leaf switches under a spine (a"
            + " two-level hierarchy, docs/ARCHITECTURE.md section 9), embedded on loopback; rank r joins the leaf that"
            + " serves it. Each worker count must be at least L (default: one switch). With --rack: L racks, each"
            + " with its bridge and its leaf on it, every leaf joined to a spine namespace by one link at --rate;"
            + " one --workers value.")
    Integer leaves;

    @Option(names = "--hosts", paramLabel = "H", description = "With --rack and --ranks-per-host: H hosts of R ranks each,"
            + " behind one link per host; the workers are H x R (instead of --workers). The switch path's ranks of a"
            + " host sum through one agent, which sends one contribution to the switch on the fabric; the ring's"
            + " ranks on one host talk over that host's loopback.")
    Integer hosts;

    @Option(names = "--ranks-per-host", paramLabel = "R", description = "With --rack --hosts H: rank processes per host"
            + " (default: 1, a host per rank).")
    Integer ranksPerHost;

    @Option(names = "--mtu", defaultValue = "9000", description = "With --rack: the MTU of every link (default: ${DEFAULT-VALUE}).")
    int mtu;

    @Option(names = "--fault-drop", description = "Workers drop each datagram they send or receive with this probability"
            + " (fault injection; switchml.faultDropRate).")
    Double faultDrop;

    @Option(names = "--fault-duplicate", description = "Workers duplicate each datagram they send or receive with this"
            + " probability (switchml.faultDuplicateRate).")
    Double faultDuplicate;

    @Option(names = "--fault-delay-us", description = "Workers delay each datagram they send or receive by a random 0..this"
            + " many microseconds, reordering them (switchml.faultMaxDelayMicros; --set faultDelayRate=P delays only a"
            + " fraction P, --set faultSeed=S changes the seed).")
    Long faultDelayMicros;

    @Option(names = "--timeout", defaultValue = "PT30M", description = "Give up when the workers take longer, ISO-8601 (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws InterruptedException {
        BenchFormat output;
        try {
            output = BenchFormat.named(format);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--format: " + e.getMessage(), e);
        }
        Map<String, String> settings = tuning.settings();
        putIfSet(settings, SwitchMLConfig.Key.FAULT_DROP_RATE, faultDrop);
        putIfSet(settings, SwitchMLConfig.Key.FAULT_DUPLICATE_RATE, faultDuplicate);
        putIfSet(settings, SwitchMLConfig.Key.FAULT_MAX_DELAY_MICROS, faultDelayMicros);
        List<AllReduceAlgorithm> algos = new ArrayList<>();
        for (String name : algorithms) {
            try {
                algos.add(AllReduceAlgorithm.named(name));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--algo: " + e.getMessage(), e);
            }
        }
        Rack.Spec rackSpec = null;
        double switchDrop = drop;
        if (rack) {
            if (rate == null) {
                throw new IllegalArgumentException("--rack needs --rate, e.g. --rate 500mbit");
            }
            int perHost = ranksPerHost == null ? 1 : ranksPerHost;
            if (hosts != null) {
                if (hosts < 1) {
                    throw new IllegalArgumentException("--hosts must be at least 1, not " + hosts);
                }
                workers = List.of(hosts * perHost);
            } else if (ranksPerHost != null) {
                throw new IllegalArgumentException("--ranks-per-host needs --hosts");
            }
            int most = workers.stream().mapToInt(Integer::intValue).max().orElse(1);
            if (switchHosts != null && switchHosts < 1) {
                throw new IllegalArgumentException("--switch-hosts must be at least 1, not " + switchHosts
                        + " (leave it out for the switch on the fabric)");
            }
            rackSpec = new Rack.Spec(most, Rack.parseRate(rate), mtu, drop, switchHosts == null ? 0 : switchHosts,
                    leaves == null ? 0 : leaves, perHost);
            switchDrop = 0;
        } else if (rate != null) {
            throw new IllegalArgumentException("--rate needs --rack");
        } else if (hosts != null || ranksPerHost != null) {
            throw new IllegalArgumentException("--hosts and --ranks-per-host build hosts in the emulated rack: they need --rack");
        } else if (switchHosts != null && switchHosts < 1) {
            throw new IllegalArgumentException("--switch-hosts must be at least 1, not " + switchHosts);
        }
        BenchOptions options = new BenchOptions(workers, sizes.bytes(), sizes.iterations, sizes.warmup, sizes.verify,
                sizes.dataType(), controller, settings, switchPorts, sizes.seed, timeout, switchDrop, algos, rackSpec,
                compression.compression().withMomentum(topKMomentum), rack || switchHosts == null ? 0 : switchHosts,
                sizes.sparsity(), syscalls);
        if (rack) {
            Rack.requireRoot(Rack.effectiveUid()); // before anything else, with the clear message
        }
        if (syscalls) {
            BenchRunner.requireSyscallCounting(); // before the run, which may be long
        }
        if (plot != null) {
            PlotFiles.requireWritable(plot); // before the run, which may be long
        }
        PrintStream out = System.out;
        if (rackSpec != null && output == BenchFormat.TABLE) {
            out.println("# emulated rack: " + rackSpec.describe() + "; every row at rate_bps " + rackSpec.rateBps());
        }
        output.header().ifPresent(out::println);
        List<BenchRow> rows = new BenchRunner(options, System.err, quiet, leaves == null ? 0 : leaves).run(row -> {
            out.println(output.line(row));
            out.flush();
        });
        if (plot != null) {
            BenchPlot.write(rows, plot);
            System.err.println("plot written to " + plot);
        }
        boolean failed = rows.stream().anyMatch(r -> Boolean.FALSE.equals(r.verified()));
        if (failed) {
            System.err.println("VERIFICATION FAILED: some results differ from the exact expected value");
        }
        return failed ? 2 : 0;
    }

    private static void putIfSet(Map<String, String> settings, SwitchMLConfig.Key key, Object value) {
        if (value != null) {
            settings.put(key.property(), value.toString());
        }
    }
}
