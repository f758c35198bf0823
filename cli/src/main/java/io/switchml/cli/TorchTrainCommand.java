package io.switchml.cli;

import io.switchml.launch.Rack;
import io.switchml.training.TrainOptimizer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code switchml train}'s job in PyTorch: the Fashion-MNIST MLP trained with DDP, gradients averaged by the comm hook. */
@Command(name = "torch-train", mixinStandardHelpOptions = true,
        description = {"Train the Fashion-MNIST MLP with PyTorch DDP over --workers Python ranks, gradients averaged by"
                + " switchml_torch's comm hook through the switch (--hook switchml), the ring baseline (ring), or by"
                + " DDP's own all-reduce without a hook (--hook none) on the process group's backend: Gloo, or the"
                + " switch's with --backend switchml. Same flags and JSON fields as switchml train."})
final class TorchTrainCommand implements Callable<Integer> {
    @Option(names = "--workers", defaultValue = "2", description = "Ranks (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--hook", defaultValue = "switchml", description = "switchml, ring, ps, or none (gloo is a synonym):"
            + " DDP's own all-reduce on the backend (default: ${DEFAULT-VALUE}).")
    String hook;

    @Option(names = "--backend", defaultValue = "gloo", description = "The process group's backend: gloo, or switchml"
            + " (switchml_torch's; with --hook none DDP all-reduces through the switch) (default: ${DEFAULT-VALUE}).")
    String backend;

    @Mixin
    TorchRackOptions placement;

    @Mixin
    TrainingRunOptions run;

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
        if (!List.of("switchml", "ring", "ps", "none", "gloo").contains(hook)) {
            throw new IllegalArgumentException("--hook must be switchml, ring, ps or none, not " + hook);
        }
        if (!List.of("gloo", "switchml").contains(backend)) {
            throw new IllegalArgumentException("--backend must be gloo or switchml, not " + backend);
        }
        boolean hookless = hook.equals("none") || hook.equals("gloo");
        if (backend.equals("switchml") && !hookless && !hook.equals("switchml")) {
            throw new IllegalArgumentException("--backend switchml all-reduces through the switch; --hook " + hook
                    + " would start a second agent beside the backend's: use --hook none or switchml");
        }
        if (!"json".equals(format) && !"table".equals(format)) {
            throw new IllegalArgumentException("--format must be table or json, not " + format);
        }
        List<String> args = new ArrayList<>(List.of("-m", "switchml_torch.train", "--hook", hook,
                "--backend", backend, "--epochs", String.valueOf(run.epochs),
                "--batch-size", String.valueOf(run.batchSize),
                "--lr", String.valueOf(run.learningRate(TrainOptimizer.Kind.ADAM.defaultLearningRate())), "--seed", String.valueOf(run.seed),
                "--data", run.dataDirectory().toString(), "--limit", String.valueOf(run.limit), "--format", format));
        Rack.Spec rack = placement.spec(workers, controller);
        if (rack != null) {
            args.addAll(List.of("--rate-bps", String.valueOf(rack.rateBps())));
        }
        // Gloo without a hook needs no agent; the launcher then starts no switch either.
        String algorithm = backend.equals("switchml") ? "switchml" : hookless ? "none" : hook;
        return new TorchLauncher(System.out, System.err).run(workers, algorithm, controller, python, args, timeout, rack);
    }
}
