package io.switchml.cli;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Multi-host training as a launcher runs it: a switch process, and each rank a `switchml train
 * --from-environment` process told its rank, world size, job and switch only by the environment (as srun or
 * an MPI-style launcher sets it). Rank 0 gathers every rank's reports and prints the JSON a run on one host
 * prints; the others end quietly.
 */
class TrainFromEnvironmentIT {
    private static final Pattern CONTROLLER = Pattern.compile("controller (127\\.0\\.0\\.1:\\d+) \\(gRPC\\)");

    @Test
    void ranksStartedByALauncherTrainAndRankZeroReportsTheRun() throws Exception {
        assertThat(Path.of("/usr/share/datasets/fashion-mnist")).as("dataset-fashion-mnist (.ci/run installs it)").isDirectory();
        SwitchProcess started = SwitchProcess.start("--bind", "127.0.0.1", "--port", "0", "--controller-bind", "127.0.0.1",
                "--controller-port", "0");
        Matcher m = CONTROLLER.matcher(started.readyLine());
        assertThat(m.find()).as("ready line: %s", started.readyLine()).isTrue();
        List<Process> ranks = new ArrayList<>();
        try {
            for (int rank = 0; rank < 2; rank++) {
                ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp", System.getProperty("java.class.path"), SwitchMlCommand.class.getName(), "train",
                        "--from-environment", "--epochs", "1", "--limit", "1280", "--format", "json");
                Map<String, String> env = pb.environment();
                env.put("RANK", String.valueOf(rank));
                env.put("WORLD_SIZE", "2");
                env.put("MASTER_ADDR", "10.1.2.3");
                env.put("MASTER_PORT", "29500");
                env.put("SWITCHML_CONTROLLER", m.group(1));
                ranks.add(pb.start());
            }
            List<String> out = new ArrayList<>();
            List<String> err = new ArrayList<>();
            for (Process p : ranks) {
                // Read both streams to the end first, so no rank blocks on a full pipe.
                var stderr = p.getErrorStream();
                Thread drain = new Thread(() -> {
                    try {
                        err.add(new String(stderr.readAllBytes(), StandardCharsets.UTF_8));
                    } catch (java.io.IOException e) {
                        err.add(e.toString());
                    }
                });
                drain.start();
                out.add(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
                assertThat(p.waitFor(240, TimeUnit.SECONDS)).as("rank ended").isTrue();
                drain.join(10_000);
                assertThat(p.exitValue()).as("rank exit code; stderr: %s", err.get(err.size() - 1)).isZero();
            }
            assertThat(err.get(0)).contains("rank 0 of 2 in job 'torch-10.1.2.3:29500' at " + m.group(1));
            JsonObject summary = JsonParser.parseString(out.get(0).strip().lines().reduce((a, b) -> b).orElseThrow())
                    .getAsJsonObject();
            assertThat(summary.get("workers").getAsInt()).isEqualTo(2);
            assertThat(summary.get("parameters_identical").getAsBoolean()).isTrue();
            assertThat(summary.getAsJsonArray("per_epoch")).hasSize(1);
            assertThat(summary.get("test_accuracy").getAsDouble()).isGreaterThan(0.3);
            assertThat(out.get(1)).as("only rank 0 reports the run").isBlank();
            assertThat(err.get(1)).contains("rank 1 done; rank 0 reports the run");
        } finally {
            ranks.forEach(Process::destroyForcibly);
            started.process().destroy();
            started.process().waitFor(20, TimeUnit.SECONDS);
        }
    }
}
