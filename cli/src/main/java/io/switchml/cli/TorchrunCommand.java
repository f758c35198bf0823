package io.switchml.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code torchrun} for this host with a switch: N ranks of a PyTorch DDP script whose hook aggregates through switchml. */
@Command(name = "torchrun", mixinStandardHelpOptions = true,
        description = {"Run N ranks of a PyTorch script on this host, as torchrun --nproc_per_node N does, with an embedded"
                + " switch (unless --controller); switchml_torch.start_agent() in the script joins each rank to it."})
final class TorchrunCommand implements Callable<Integer> {
    @Option(names = "--workers", defaultValue = "2", description = "Ranks (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--algo", defaultValue = "switchml", completionCandidates = AlgorithmsCommand.Names.class,
            description = "What the agents join, of the registered all-reduce algorithms: ${COMPLETION-CANDIDATES}"
                    + " (default: ${DEFAULT-VALUE}).")
    String algorithm;

    @Option(names = "--controller", description = "HOST:PORT of a running switch's controller instead of an embedded switch.")
    String controller;

    @Option(names = "--python", description = "The Python interpreter (default: /usr/bin/python3 where it exists, else python3).")
    String python = TorchLauncher.defaultPython();

    @Option(names = "--timeout", defaultValue = "PT0S", description = "Stop the ranks when they run longer, ISO-8601;"
            + " PT0S (the default): no limit (a rank that fails still stops the others at once).")
    Duration timeout;

    @Option(names = {"-m", "--module"}, description = "SCRIPT is a module, run as python -m MODULE (as torchrun -m).")
    boolean module;

    @Mixin
    TorchRackOptions placement;

    @Parameters(arity = "1..*", paramLabel = "SCRIPT [ARGS]", description = "The script and its arguments: everything"
            + " after the script goes to it, options included (as with torchrun).")
    List<String> script = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        List<String> command = new ArrayList<>(script);
        if (module) {
            command.add(0, "-m");
        }
        return new TorchLauncher(System.out, System.err).run(workers, algorithm, controller, python, command, timeout,
                placement.spec(workers, controller));
    }
}
