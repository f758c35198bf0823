package io.switchml.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The switch server's own {@code switchml}: a switch, its inspection (ctl) and test certificates, and
 * nothing that trains or benchmarks, so that the lean distribution (switchml-switch-VERSION.tar.gz)
 * runs without Spark, DJL or PyTorch on its class path. Picocli reads every subcommand's class when it
 * starts, hence a root of its own rather than the full command with jars left out.
 */
@Command(name = "switchml", mixinStandardHelpOptions = true, version = "switchml 0.1.0",
        description = "The switch server of switchml: in-network aggregation for distributed training on the JVM.",
        subcommands = {SwitchCommand.class, CtlCommand.class, CertsCommand.class, CommandLine.HelpCommand.class})
public final class SwitchServerCommand extends RootCommand {
    public static void main(String[] args) {
        System.exit(SwitchMlCommand.commandLine(new SwitchServerCommand()).execute(args));
    }
}
