package io.switchml.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code switchml} command: a switch, workers, benchmarks, training, the demo, the switch's inspection (ctl) and the cost model. */
@Command(name = "switchml", mixinStandardHelpOptions = true, version = "switchml 0.1.0",
        description = "In-network aggregation for distributed training on the JVM, after SwitchML (NSDI 2021).",
        subcommands = {SwitchCommand.class, BenchCommand.class, WorkerCommand.class, TrainCommand.class, DemoCommand.class,
                AgentCli.class, TorchrunCommand.class, TorchTrainCommand.class,
                CtlCommand.class, CertsCommand.class, CostCommand.class, AlgorithmsCommand.class,
                CommandLine.HelpCommand.class})
public final class SwitchMlCommand extends RootCommand {
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        return commandLine(new SwitchMlCommand());
    }

    /** The command line of a root command, with the errors of a command's run printed as one line. */
    static CommandLine commandLine(Object root) {
        CommandLine cl = new CommandLine(root);
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            String name = commandLine.getCommandSpec().qualifiedName(" ");
            if (e.getMessage() == null) {
                // No words for the user: a bug of ours, so the whole trace, for the report.
                commandLine.getErr().println(name + ": internal error " + e);
                e.printStackTrace(commandLine.getErr());
            } else {
                commandLine.getErr().println(name + ": " + e.getMessage());
            }
            return 1;
        });
        // torchrun's rule: everything after the script is the script's, options included (--epochs 1).
        CommandLine torchrun = cl.getSubcommands().get("torchrun");
        if (torchrun != null) {
            torchrun.setStopAtPositional(true);
        }
        return cl;
    }
}
