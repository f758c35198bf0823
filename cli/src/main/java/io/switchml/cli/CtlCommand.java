package io.switchml.cli;

import io.switchml.client.SecretFiles;
import io.switchml.control.ControlChannel;
import io.switchml.control.ControllerAddress;
import io.switchml.control.ControllerCredentials;
import io.switchml.control.TlsSettingNames;
import io.switchml.controller.proto.StatusRequest;
import io.switchml.controller.proto.StatusResponse;
import io.switchml.protocol.ProtocolConstants;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine;

import java.nio.file.Path;
import java.time.Duration;

/** {@code switchml ctl}: inspects and steers a running switch through its controller. */
@Command(name = "ctl", mixinStandardHelpOptions = true,
        description = "Inspect a running switch through its controller: its jobs, one job's slot bitmaps, its counters;"
                + " change its drop simulator.",
        subcommands = {CtlJobsCommand.class, CtlJobCommand.class, CtlStatsCommand.class, CtlDropCommand.class,
                CtlSecretCommand.class, CtlEndSessionCommand.class})
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

    @Option(names = "--token-file", scope = ScopeType.INHERIT, paramLabel = "FILE",
            description = "File holding the switch's operator token (its first line); default: the environment variable "
                    + TOKEN_VARIABLE + ", else none.")
    Path tokenFile;

    @Option(names = "--tls-ca", scope = ScopeType.INHERIT, paramLabel = "PEM",
            description = "Talk TLS to the controller, trusting this CA for its certificate (default: plaintext).")
    Path tlsCa;

    @Option(names = "--tls-cert", scope = ScopeType.INHERIT, paramLabel = "PEM",
            description = "Certificate to present to a controller that requires mutual TLS (with --tls-key).")
    Path tlsCert;

    @Option(names = "--tls-key", scope = ScopeType.INHERIT, paramLabel = "PEM", description = "PKCS#8 key of --tls-cert.")
    Path tlsKey;

    /** Where the operator token can come from instead of a file (never from the command line, which others can read). */
    static final String TOKEN_VARIABLE = "SWITCHML_TOKEN";

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** Opens a connection to the controller named by --controller. */
    ControlChannel connect() {
        String token = tokenFile != null ? SecretFiles.read(tokenFile, "--token-file")
                : System.getenv(TOKEN_VARIABLE) != null && !System.getenv(TOKEN_VARIABLE).isBlank()
                ? System.getenv(TOKEN_VARIABLE).trim() : null;
        return ControlChannel.open(ControllerAddress.parse(controller),
                new ControllerCredentials(tlsCa, tlsCert, tlsKey, token, null), TlsSettingNames.CTL, null, "", false);
    }

    /** The deadline of every call (--timeout). */
    Duration timeout() {
        return timeout;
    }

    /** The controller's status (jobs, forming jobs, counters), fetched to {@code purpose} (for the error message). */
    StatusResponse status(String purpose) {
        try (ControlChannel controller = connect()) {
            return controller.call(purpose, timeout, stub -> stub.status(StatusRequest.getDefaultInstance()));
        }
    }

    /** Where the subcommand prints, in the --format asked for. */
    CtlOutput output() {
        return CtlOutput.of(format, System.out);
    }
}
