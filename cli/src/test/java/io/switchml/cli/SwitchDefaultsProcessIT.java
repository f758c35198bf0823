package io.switchml.cli;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * `switchml switch` with its defaults (every address, no TLS, no tokens): it takes control-plane calls
 * from its own host only (protected mode) and says so at start-up, its metrics stay on loopback, and a
 * `switchml ctl drop` fails with what to do while the drop simulator stays at 0.
 */
class SwitchDefaultsProcessIT {
    private static final Pattern READY = Pattern.compile("switchml switch ready: controller 0\\.0\\.0\\.0:(\\d+) \\(gRPC\\)");

    @Test
    void aDefaultSwitchRefusesTheDropSimulatorAndTakesCallsFromItsHostOnly() throws Exception {
        SwitchProcess started = SwitchProcess.start("--port", "0", "--controller-port", "0", "--metrics-port", "0");
        Process sw = started.process();
        try {
            Matcher m = READY.matcher(started.readyLine());
            assertThat(m.find()).as("ready line: %s", started.readyLine()).isTrue();
            assertThat(started.readyLine()).contains("protected mode: control-plane calls from this host only");
            // Protected mode: no door is open beyond the host, so one line says how others get in.
            assertThat(String.join("\n", started.linesBeforeReady()))
                    .contains("security: the controller listens on 0.0.0.0 but, without credentials, takes calls from this"
                            + " host only (protected mode)", "--trusted-networks")
                    .doesNotContain("without TLS")
                    .as("the metrics endpoint stays on loopback unless --metrics-bind says otherwise")
                    .contains("switchml switch metrics: http://127.0.0.1:").doesNotContain("the metrics endpoint listens on");
            String controller = "127.0.0.1:" + m.group(1);

            Run drop = Run.of("ctl", "--controller", controller, "drop", "--ingress", "0.5");
            assertThat(drop.exitCode()).as("ctl drop exit code").isNotZero();
            assertThat(drop.err()).contains("switchml ctl drop: cannot set the drop simulator: fault injection",
                    "--allow-fault-injection");

            Run stats = Run.of("ctl", "--controller", controller, "stats", "--format", "json");
            assertThat(stats.exitCode()).as("ctl stats; stderr: %s", stats.err()).isZero();
            JsonObject probabilities = JsonParser.parseString(stats.out()).getAsJsonObject()
                    .getAsJsonObject("drop_probabilities");
            assertThat(probabilities.get("ingress").getAsDouble()).isZero();
            assertThat(probabilities.get("egress").getAsDouble()).isZero();
        } finally {
            sw.destroy();
            sw.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
