package io.switchml.cli;

import io.switchml.client.ControllerAddress;
import io.switchml.controller.proto.StatusRequest;
import io.switchml.controller.proto.StatusResponse;
import io.switchml.protocol.ProtocolConstants;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

import java.time.Duration;

/** {@code switchml ctl}: inspects and steers a running switch through its controller. */
@Command(name = "ctl", mixinStandardHelpOptions = true,
        description = "Inspect a running switch through its controller: its jobs, one job's slot bitmaps, its counters;"
                + " change its drop simulator.",
        subcommands = {CtlJobsCommand.class, CtlJobCommand.class, CtlStatsCommand.class, CtlDropCommand.class})
final class CtlCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--controller", scope = ScopeType.INHERIT, paramLabel = "HOST:PORT",
            defaultValue = "127.0.0.1:" + ProtocolConstants.CONTROLLER_TCP_PORT,
            description = "HOST:PORT of the switch's controller (default: ${DEFAULT-VALUE}).")
    String controller;

    @Option(names = "--format", scope = ScopeType.INHERIT, defaultValue = "table", paramLabel = "table|json",
            description = "table or json (one object) (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(names = "--timeout", scope = ScopeType.INHERIT, defaultValue = "PT10S", paramLabel = "DURATION",
            description = "Give up when the controller does not answer in this time, ISO-8601 (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** Opens a connection to the controller named by --controller. */
    ControllerConnection connect() {
        return new ControllerConnection(ControllerAddress.parse(controller), timeout);
    }

    /** The controller's status (jobs, forming jobs, counters), fetched to {@code purpose} (for the error message). */
    StatusResponse status(String purpose) {
        try (ControllerConnection controller = connect()) {
            return controller.call(purpose, stub -> stub.status(StatusRequest.getDefaultInstance()));
        }
    }

    /** Where the subcommand prints, in the --format asked for. */
    CtlOutput output() {
        return CtlOutput.of(format, System.out);
    }
}
