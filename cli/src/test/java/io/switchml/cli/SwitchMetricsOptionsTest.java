package io.switchml.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** `switchml switch`'s metrics options that cannot work are refused before anything starts, saying why. */
class SwitchMetricsOptionsTest {

    @Test
    void metricsTlsNeedsTheControllersCertificate() {
        Run run = Run.of("switch", "--bind", "127.0.0.1", "--port", "0", "--controller-bind", "127.0.0.1",
                "--controller-port", "0", "--metrics-port", "0", "--metrics-tls");
        assertThat(run.exitCode()).isNotZero();
        assertThat(run.err()).contains("--metrics-tls serves the metrics with the controller's certificate: set --tls-cert"
                + " and --tls-key");
    }

    @Test
    void metricsOptionsNeedTheMetricsPort(@TempDir Path dir) throws Exception {
        Path token = Files.writeString(dir.resolve("metrics.token"), "metrics-token-0123456789abcdef\n");
        Run run = Run.of("switch", "--bind", "127.0.0.1", "--port", "0", "--controller-bind", "127.0.0.1",
                "--controller-port", "0", "--metrics-token-file", token.toString());
        assertThat(run.exitCode()).isNotZero();
        assertThat(run.err()).contains("which --metrics-port turns on");
    }

    @Test
    void theHelpNamesTheMetricsOptionsAndTheLoopbackDefault() {
        CommandLine command = SwitchMlCommand.commandLine().getSubcommands().get("switch");
        assertThat(command.getUsageMessage()).contains("--metrics-bind=ADDRESS", "--metrics-token-file=FILE",
                "--metrics-tls", "--metrics-job-names");
        assertThat(command.getCommandSpec().findOption("--metrics-bind").defaultValue()).isEqualTo("127.0.0.1");
    }
}
