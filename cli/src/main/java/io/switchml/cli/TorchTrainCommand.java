package io.switchml.cli;

import io.switchml.launch.Rack;
import io.switchml.training.TrainOptimizer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code switchml train}'s job in PyTorch: the Fashion-MNIST MLP trained with DDP, gradients averaged by the comm hook;
 * or, with {@code --model}, real models on synthetic inputs ({@code python/bench/models.py}).
 */
@Command(name = "torch-train", mixinStandardHelpOptions = true,
        description = {"Train the Fashion-MNIST MLP with PyTorch DDP over --workers Python ranks, gradients averaged by"
                + " switchml_torch's comm hook through the switch (--hook switchml), the ring baseline (ring), or by"
                + " DDP's own all-reduce without a hook (--hook none) on the process group's backend: Gloo, or the"
                + " switch's with --backend switchml. Same flags and JSON fields as switchml train.",
                "With --model NAME[,NAME...] it trains real models instead (torchvision's ResNet-18/50, VGG-11/16,"
                        + " MobileNet-V2, a BERT-base-shaped transformer, a DLRM-shaped recommender) on synthetic"
                        + " inputs for --steps steps each, the same way, and reports one row or JSON object per model."
                        + " The torchvision models need a torchvision that imports with the ranks' torch: on torch"
                        + " 2.13 only bert_base and dlrm run (the index's torchvision 0.28.0 does not import there);"
                        + " docs/pytorch.md, \"Real models\"."})
final class TorchTrainCommand implements Callable<Integer> {
    /** The models python/bench/models.py trains (its MODELS); python/tests/test_models.py checks the two agree. */
    static final List<String> MODELS = List.of("resnet18", "resnet50", "vgg11", "vgg16", "mobilenet_v2", "bert_base", "dlrm");
    /** How long python/bench/model_table.py may take to print a table of rows it was handed. */
    private static final Duration TABLE_TIMEOUT = Duration.ofSeconds(60);

    @Spec
    CommandSpec spec;

    @Option(names = "--model", description = "Train these models (comma-separated) on synthetic inputs instead of the"
            + " Fashion-MNIST MLP: resnet18, resnet50, vgg11, vgg16, mobilenet_v2 (torchvision's, so they need a"
            + " torchvision that imports; on torch 2.13 the index's does not), bert_base, dlrm. Each model's batch size"
            + " (per rank; --batch-size overrides it) and input size are chosen for 4 ranks on 2 cores; the run says"
            + " which. --epochs, --limit and --data do not apply.")
    String model;

    @Option(names = "--steps", description = "With --model: training steps per model, the first not timed (default: 10).")
    Integer steps;

    @Option(names = "--workers", defaultValue = "2", description = "Ranks (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--hook", defaultValue = "switchml", description = "switchml, ring, ps, or none (gloo is a synonym):"
            + " DDP's own all-reduce on the backend (default: ${DEFAULT-VALUE}).")
    String hook;

    @Option(names = "--backend", defaultValue = "gloo", description = "The process group's backend: gloo, or switchml"
            + " (switchml_torch's; with --hook none DDP all-reduces through the switch) (default: ${DEFAULT-VALUE})."
            + " With --model, several (switchml,gloo) run the models on each in turn and print them side by side with"
            + " the speedup over Gloo (python/bench/model_table.py); the hook is then none unless --hook is given.")
    String backend;

    @Mixin
    TorchRackOptions placement;

    @Mixin
    TrainingRunOptions run;

    @Option(names = "--plot", description = "With --model: also draw each model's speedup over Gloo (Gloo's step time"
            + " / the switch's) into this SVG file, as SwitchML's paper plots it; implies a comparison (add gloo to"
            + " --backend).")
    Path plot;

    @Option(names = "--format", defaultValue = "table", description = "table, or json: one object at the end (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(names = "--controller", description = "HOST:PORT of a running switch's controller instead of an embedded switch.")
    String controller;

    @Option(names = "--python", description = "The Python interpreter (default: /usr/bin/python3 where it exists, else python3).")
    String python = TorchLauncher.defaultPython();

    @Option(names = "--timeout", defaultValue = "PT0S", description = "Give up when training takes longer, ISO-8601;"
            + " PT0S (the default): no limit, as a launcher should not kill a job unless asked (a dead rank or switch"
            + " still ends the run within seconds).")
    Duration timeout;

    @Override
    public Integer call() throws Exception {
        List<String> backends = List.of(backend.split(",", -1)).stream().map(String::strip).toList();
        boolean hookGiven = spec.commandLine().getParseResult().hasMatchedOption("--hook");
        // A comparison is of DDP's own all-reduce on each backend unless a hook was asked for.
        boolean comparing = backends.size() > 1 || plot != null;
        String hook = comparing && !hookGiven ? "none" : this.hook;
        if (!List.of("switchml", "ring", "ps", "none", "gloo").contains(hook)) {
            throw new IllegalArgumentException("--hook must be switchml, ring, ps or none, not " + hook);
        }
        boolean hookless = hook.equals("none") || hook.equals("gloo");
        for (String b : backends) {
            if (!List.of("gloo", "switchml").contains(b)) {
                throw new IllegalArgumentException("--backend must be gloo, switchml or both (switchml,gloo), not " + backend);
            }
            if (b.equals("switchml") && !hookless && !hook.equals("switchml")) {
                throw new IllegalArgumentException("--backend switchml all-reduces through the switch; --hook " + hook
                        + " would start a second agent beside the backend's: use --hook none or switchml");
            }
        }
        if (!"json".equals(format) && !"table".equals(format)) {
            throw new IllegalArgumentException("--format must be table or json, not " + format);
        }
        if (comparing) {
            return compare(backends, hook);
        }
        List<String> args = model != null ? modelArguments(backend, hook, format) : mlpArguments();
        return launch(backend, hook, args, System.out);
    }

    /** One run on {@code backend}, rank 0's output to {@code out}. */
    private int launch(String backend, String hook, List<String> args, PrintStream out) throws Exception {
        Rack.Spec rack = placement.spec(workers, controller);
        if (rack != null) {
            args.addAll(List.of("--rate-bps", String.valueOf(rack.rateBps())));
        }
        // Gloo without a hook needs no agent; the launcher then starts no switch either.
        boolean hookless = hook.equals("none") || hook.equals("gloo");
        String algorithm = backend.equals("switchml") ? "switchml" : hookless ? "none" : hook;
        return new TorchLauncher(out, System.err).run(workers, algorithm, controller, python, args, timeout, rack);
    }

    /**
     * The models on each backend in turn, then python/bench/model_table.py's side-by-side table of their rows (with
     * --format json, the rows themselves), and its plot with --plot.
     */
    private int compare(List<String> backends, String hook) throws Exception {
        if (model == null) {
            throw new IllegalArgumentException("--backend " + backend + (plot != null ? " with --plot" : "")
                    + " compares backends on real models: it needs --model (the MLP runs one backend at a time)");
        }
        if (plot != null && !backends.contains("gloo")) {
            throw new IllegalArgumentException("--plot draws the speedup over Gloo: add gloo to --backend");
        }
        ByteArrayOutputStream rows = new ByteArrayOutputStream();
        for (String b : backends) {
            System.err.println("switchml torch-train: " + model + " on " + b + " (hook " + hook + ")");
            int code = launch(b, hook, modelArguments(b, hook, "json"), new PrintStream(rows, true, StandardCharsets.UTF_8));
            if (code != 0) {
                System.err.println("switchml torch-train: the run on " + b + " failed (exit code " + code + "); no table");
                return code;
            }
        }
        if ("json".equals(format)) {
            System.out.print(rows.toString(StandardCharsets.UTF_8));
            System.out.flush();
            return 0;
        }
        List<String> command = new ArrayList<>(List.of(python,
                TorchLauncher.home().resolve("python/bench/model_table.py").toString()));
        if (plot != null) {
            command.addAll(List.of("--plot", plot.toString()));
        }
        Process table = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.INHERIT)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (OutputStream in = table.getOutputStream()) {
            rows.writeTo(in);
        }
        if (!table.waitFor(TABLE_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            table.destroyForcibly();
            throw new IllegalStateException("python/bench/model_table.py did not print the table within " + TABLE_TIMEOUT);
        }
        return table.exitValue();
    }

    private List<String> mlpArguments() {
        if (steps != null) {
            throw new IllegalArgumentException("--steps needs --model (the MLP trains for --epochs)");
        }
        return new ArrayList<>(List.of("-m", "switchml_torch.train", "--hook", hook,
                "--backend", backend, "--epochs", String.valueOf(run.epochs),
                "--batch-size", String.valueOf(run.batchSize),
                "--lr", String.valueOf(run.learningRate(TrainOptimizer.Kind.ADAM.defaultLearningRate())), "--seed", String.valueOf(run.seed),
                "--data", run.dataDirectory().toString(), "--limit", String.valueOf(run.limit), "--format", format));
    }

    /** python/bench/models.py's arguments as given; only what the user gave of the MLP's batch size and learning rate. */
    List<String> modelArguments() {
        return modelArguments(backend, hook, format);
    }

    /** The same on this backend and hook, printing this format. */
    List<String> modelArguments(String backend, String hook, String format) {
        List<String> names = List.of(model.split(",", -1)).stream().map(String::strip).toList();
        List<String> unknown = names.stream().filter(n -> !MODELS.contains(n)).toList();
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown model " + String.join(", ", unknown.stream()
                    .map(n -> n.isEmpty() ? "''" : n).toList()) + " (--model); known: " + String.join(", ", MODELS));
        }
        for (String mlpOnly : List.of("--epochs", "--limit", "--data")) {
            if (spec.commandLine().getParseResult().hasMatchedOption(mlpOnly)) {
                throw new IllegalArgumentException(mlpOnly + " is the Fashion-MNIST MLP's; with --model, use --steps");
            }
        }
        int n = steps == null ? 10 : steps;
        if (n < 2) {
            throw new IllegalArgumentException("--steps must be at least 2 (the first is not timed), not " + n);
        }
        List<String> args = new ArrayList<>(List.of(TorchLauncher.home().resolve("python/bench/models.py").toString(),
                "--model", String.join(",", names), "--hook", hook, "--backend", backend, "--steps", String.valueOf(n),
                "--seed", String.valueOf(run.seed), "--format", format));
        if (spec.commandLine().getParseResult().hasMatchedOption("--batch-size")) {
            if (run.batchSize < 1) {
                throw new IllegalArgumentException("--batch-size must be at least 1, not " + run.batchSize);
            }
            args.addAll(List.of("--batch-size", String.valueOf(run.batchSize)));
        }
        if (run.learningRate != null) {
            args.addAll(List.of("--lr", String.valueOf(run.learningRate(0f))));
        }
        return args;
    }
}
