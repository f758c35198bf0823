package io.switchml.cli;

import picocli.CommandLine;

/** A root command: run without a subcommand, it prints its usage. */
abstract class RootCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
