/**
 * The {@code switchml} command (picocli): one class per subcommand ({@code SwitchCommand}, {@code BenchCommand},
 * {@code TrainCommand}, {@code DemoCommand}, {@code TorchrunCommand}, {@code TorchTrainCommand}, the
 * {@code Ctl*Command}s, ...) under {@code RootCommand}; a new command is a class and a line in its parent's
 * {@code subcommands}.
 */
package io.switchml.cli;
