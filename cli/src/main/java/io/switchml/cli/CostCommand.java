package io.switchml.cli;

import io.switchml.bench.ByteSize;
import io.switchml.bench.CostModel;
import io.switchml.bench.CostPlot;
import io.switchml.bench.CostTopology;
import io.switchml.launch.Rack;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code switchml cost}: the cost model's all-reduce times against worker count (docs/COST_MODEL.md). */
@Command(name = "cost", mixinStandardHelpOptions = true,
        description = "Print the modelled all-reduce time (ms) of one tensor for ring, parameter server, a fabric switch,"
                + " one switch host, a switch sharded over k hosts and a two-level hierarchy, against the number of"
                + " workers (docs/COST_MODEL.md). Computes only; runs nothing.")
final class CostCommand implements Callable<Integer> {
    @Option(names = "--workers", split = ",", paramLabel = "N",
            description = "Worker counts (default: 2, 4, 8, ..., 8192, 10000).")
    List<Integer> workers = defaultWorkers();

    @Option(names = "--size", defaultValue = "64MiB", description = "Tensor size (default: ${DEFAULT-VALUE}).")
    String size;

    @Option(names = "--rate", defaultValue = "100gbit", description = "Each host's link rate (default: ${DEFAULT-VALUE}).")
    String rate;

    @Option(names = "--uplink-rate", description = "A leaf switch's uplink rate (default: --rate).")
    String uplinkRate;

    @Option(names = "--shards", defaultValue = "16", paramLabel = "K",
            description = "Switch shards, and dedicated parameter servers (default: ${DEFAULT-VALUE}).")
    int shards;

    @Option(names = "--leaves", defaultValue = "32", paramLabel = "L",
            description = "Leaf switches of the hierarchy; left out where L > workers (default: ${DEFAULT-VALUE}).")
    int leaves;

    @Option(names = "--alpha", defaultValue = "5", paramLabel = "US",
            description = "Latency of one message or hop, microseconds (default: ${DEFAULT-VALUE}).")
    double alphaMicros;

    @Option(names = "--switch-efficiency", paramLabel = "FRACTION",
            description = "Payload / wire bytes of the switch path (default: 8192/(8192+8+42), MTU 9000).")
    double switchEfficiency = CostModel.SWITCH_EFFICIENCY_MTU_9000;

    @Option(names = "--tcp-efficiency", paramLabel = "FRACTION",
            description = "Payload / wire bytes of TCP for ring and parameter server (default: 0.97).")
    double tcpEfficiency = CostModel.TCP_EFFICIENCY;

    @Option(names = "--format", defaultValue = "table", description = "table or json (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Also draw time against workers, log-log, to FILE.png.")
    Path plot;

    @Override
    public Integer call() {
        CtlOutput output = CtlOutput.of(format, System.out);
        long bytes = ByteSize.parse(size);
        long rateBps = Rack.parseRate(rate);
        long uplinkBps = uplinkRate == null ? rateBps : Rack.parseRate(uplinkRate);
        CostModel model = new CostModel(rateBps, uplinkBps, switchEfficiency, tcpEfficiency, alphaMicros * 1e-6);
        if (workers.isEmpty()) {
            throw new IllegalArgumentException("--workers needs at least one worker count");
        }
        if (shards < 1 || leaves < 1) {
            throw new IllegalArgumentException("--shards and --leaves must be at least 1, not " + shards + " and " + leaves);
        }
        Map<CostTopology, List<double[]>> curves = new EnumMap<>(CostTopology.class);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int n : workers) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("workers", n);
            for (CostTopology t : CostTopology.values()) {
                List<double[]> curve = curves.computeIfAbsent(t, k -> new ArrayList<>());
                if (t.applies(n, leaves)) {
                    double seconds = t.seconds(model, n, bytes, shards, leaves);
                    row.put(t.name().toLowerCase(Locale.ROOT) + "_ms", seconds * 1e3);
                    curve.add(new double[]{n, seconds});
                }
            }
            rows.add(row);
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("bytes", bytes);
        answer.put("rate_bps", rateBps);
        answer.put("uplink_rate_bps", uplinkBps);
        answer.put("shards", shards);
        answer.put("leaves", leaves);
        answer.put("alpha_us", alphaMicros);
        answer.put("switch_efficiency", switchEfficiency);
        answer.put("tcp_efficiency", tcpEfficiency);
        answer.put("bandwidth_bound_ms", CostModel.bandwidthBound(bytes, rateBps) * 1e3);
        answer.put("rows", rows);
        String title = ByteSize.format(bytes) + " at " + rate + ", k = " + shards + ", L = " + leaves + ", alpha = "
                + alphaMicros + " us";
        output.print(answer, out -> table(out, title, bytes, rateBps, rows));
        if (plot != null) {
            CostPlot.write("all-reduce time, " + title, curves, plot);
        }
        return 0;
    }

    private static void table(PrintStream out, String title, long bytes, long rateBps, List<Map<String, Object>> rows) {
        out.printf(Locale.ROOT, "modelled all-reduce time (ms), %s; S/B = %.3f ms%n", title,
                CostModel.bandwidthBound(bytes, rateBps) * 1e3);
        StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%8s", "workers"));
        for (CostTopology t : CostTopology.values()) {
            header.append(String.format(Locale.ROOT, "  %" + width(t) + "s", t.label()));
        }
        out.println(header);
        for (Map<String, Object> row : rows) {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%8d", (Integer) row.get("workers")));
            for (CostTopology t : CostTopology.values()) {
                Object ms = row.get(t.name().toLowerCase(Locale.ROOT) + "_ms");
                String cell = ms == null ? "-" : String.format(Locale.ROOT, "%.3f", (Double) ms);
                line.append(String.format(Locale.ROOT, "  %" + width(t) + "s", cell));
            }
            out.println(line);
        }
    }

    private static int width(CostTopology t) {
        return Math.max(10, t.label().length());
    }

    private static List<Integer> defaultWorkers() {
        List<Integer> counts = new ArrayList<>();
        for (int n = 2; n <= 8192; n *= 2) {
            counts.add(n);
        }
        counts.add(10_000);
        return counts;
    }
}
