package io.switchml.cli;

import io.switchml.bench.ByteSize;
import io.switchml.bench.CostModel;
import io.switchml.bench.ModelPresets;
import io.switchml.bench.StepModel;
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

    @Option(names = "--model", split = ",", paramLabel = "NAME",
            description = "Whole-model mode: the step time of data-parallel training of these models (resnet18, resnet50,"
                    + " vgg11, vgg16, mobilenet_v2, bert_base, dlrm, or a parameter count such as 25.6M) through the ring"
                    + " and through a switch, DDP's buckets overlapped with the backward pass (docs/COST_MODEL.md).")
    List<String> models;

    @Option(names = "--compute-ms", split = ",", paramLabel = "MS",
            description = "With --model: each model's forward and backward time per step without communication, as"
                    + " measured (one value for all, or one per model).")
    List<Double> computeMs;

    @Override
    public Integer call() {
        if (models != null) {
            return modelMode();
        }
        if (computeMs != null) {
            throw new IllegalArgumentException("--compute-ms goes with --model");
        }
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

    /**
     * Each model's modelled step through the ring (what Gloo runs) and through a switch chip: DDP's buckets, each
     * all-reduce after its bucket is ready, overlapped with the backward pass ({@link StepModel}).
     */
    private int modelMode() {
        if (computeMs == null || (computeMs.size() != 1 && computeMs.size() != models.size())) {
            throw new IllegalArgumentException("--model needs --compute-ms: one time for all models, or one per model ("
                    + models.size() + ")");
        }
        List<Integer> counts = workers.equals(defaultWorkers()) ? List.of(8, 64) : workers;
        long rateBps = Rack.parseRate(rate);
        CostModel model = new CostModel(rateBps, uplinkRate == null ? rateBps : Rack.parseRate(uplinkRate), switchEfficiency,
                tcpEfficiency, alphaMicros * 1e-6);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < models.size(); i++) {
            String name = models.get(i).strip();
            long parameters = ModelPresets.parameters(name);
            double compute = computeMs.get(computeMs.size() == 1 ? 0 : i) / 1e3;
            StepModel step = StepModel.ddp(parameters * Float.BYTES, compute);
            for (int n : counts) {
                double ring = step.stepSeconds(b -> model.ring(n, b));
                double fabric = step.stepSeconds(b -> model.fabricSwitch(n, b));
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("model", name);
                row.put("parameters", parameters);
                row.put("gradient_bytes", step.gradientBytes());
                row.put("buckets", step.buckets().size());
                row.put("workers", n);
                row.put("compute_ms", compute * 1e3);
                row.put("ring_step_ms", ring * 1e3);
                row.put("switch_step_ms", fabric * 1e3);
                row.put("speedup", ring / fabric);
                row.put("ring_exposed_share", step.exposedShare(b -> model.ring(n, b)));
                row.put("switch_exposed_share", step.exposedShare(b -> model.fabricSwitch(n, b)));
                rows.add(row);
            }
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("modelled", true);
        answer.put("rate_bps", rateBps);
        answer.put("alpha_us", alphaMicros);
        answer.put("rows", rows);
        CtlOutput.of(format, System.out).print(answer, out -> {
            out.printf(Locale.ROOT, "modelled step time (ms) of data-parallel training at %s, DDP buckets (1 MiB, then"
                    + " 25 MiB) overlapped with the backward (2/3 of compute); ring = Gloo's algorithm, switch = a"
                    + " switch chip; speedup = ring / switch%n", rate);
            out.printf(Locale.ROOT, "%-13s %9s %9s %7s %10s %10s %10s %8s %9s %9s%n", "model", "params", "grads MB",
                    "workers", "compute", "ring", "switch", "speedup", "ring exp", "sw exp");
            for (Map<String, Object> r : rows) {
                out.printf(Locale.ROOT, "%-13s %8.1fM %9.1f %7d %10.1f %10.1f %10.1f %7.2fx %8.0f%% %8.0f%%%n",
                        r.get("model"), (Long) r.get("parameters") / 1e6, (Long) r.get("gradient_bytes") / 1e6,
                        (Integer) r.get("workers"), (Double) r.get("compute_ms"), (Double) r.get("ring_step_ms"),
                        (Double) r.get("switch_step_ms"), (Double) r.get("speedup"),
                        100 * (Double) r.get("ring_exposed_share"), 100 * (Double) r.get("switch_exposed_share"));
            }
        });
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
