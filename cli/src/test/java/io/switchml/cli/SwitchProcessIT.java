package io.switchml.cli;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.switchml.controller.MetricsScrape.scrape;
import static io.switchml.controller.MetricsScrape.value;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * `switchml switch` as a script uses it: wait for its ready line, then run workers against it, then
 * inspect it with `switchml ctl` and scrape its metrics endpoint.
 */
class SwitchProcessIT {
    private static final Pattern METRICS = Pattern.compile("switchml switch metrics: http://127\\.0\\.0\\.1:(\\d+)/metrics");
    private static final Pattern READY = Pattern.compile(
            "switchml switch ready: controller 127\\.0\\.0\\.1:(\\d+) \\(gRPC\\), dataplane UDP 127\\.0\\.0\\.1 ports \\[(\\d+)]");

    @Test
    void workersJoinASwitchStartedAsAProcess() throws Exception {
        SwitchProcess started = SwitchProcess.start("--bind", "127.0.0.1", "--port", "0", "--controller-bind", "127.0.0.1",
                "--controller-port", "0", "--metrics-port", "0", "--pool-slots", "4096", "--job-quota", "1024");
        Process sw = started.process();
        try {
            Matcher m = READY.matcher(started.readyLine());
            assertThat(m.find()).as("ready line: %s", started.readyLine()).isTrue();
            int metricsPort = -1;
            for (String line : started.linesBeforeReady()) {
                Matcher metrics = METRICS.matcher(line);
                if (metrics.find()) {
                    metricsPort = Integer.parseInt(metrics.group(1));
                }
            }
            String controller = "127.0.0.1:" + m.group(1);
            List<CompletableFuture<Integer>> workers = List.of(0, 1).stream()
                    .map(rank -> CompletableFuture.supplyAsync(() -> SwitchMlCommand.commandLine().execute("worker",
                            "--controller", controller, "--workers", "2", "--rank", String.valueOf(rank),
                            "--job", "cli-test", "--size", "8KiB,1MiB", "--iters", "2", "--warmup", "0", "--verify")))
                    .toList();
            for (CompletableFuture<Integer> w : workers) {
                assertThat(w.get(120, TimeUnit.SECONDS)).as("worker exit code").isZero();
            }

            // The workers are done: the counters stay put, so ctl and the metrics must agree exactly.
            Run stats = Run.of("ctl", "--controller", controller, "stats", "--format", "json");
            assertThat(stats.exitCode()).as("ctl stats; stderr: %s", stats.err()).isZero();
            JsonObject counters = JsonParser.parseString(stats.out()).getAsJsonObject().getAsJsonObject("counters");
            long received = counters.get("packets_received").getAsLong();
            assertThat(received).isPositive();
            assertThat(metricsPort).as("metrics line printed before the ready line").isPositive();
            String metrics = scrape(metricsPort);
            assertThat(value(metrics, "switchml_packets_received_total")).isEqualTo(received);
            assertThat(value(metrics, "switchml_results_sent_total")).isEqualTo(counters.get("results_sent").getAsLong());
            assertThat(value(metrics, "switchml_drops_total{reason=\"unknown_source\"}")).isZero();
            assertThat(value(metrics, "switchml_jobs_installed")).isZero();
        } finally {
            sw.destroy();
            assertThat(sw.waitFor(20, TimeUnit.SECONDS)).as("switch stops on SIGTERM").isTrue();
        }
    }
}
