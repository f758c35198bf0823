package io.switchml.cli;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** `switchml switch` as a script uses it: wait for its ready line, then run workers against it. */
class SwitchProcessTest {
    private static final Pattern READY = Pattern.compile(
            "switchml switch ready: controller 127\\.0\\.0\\.1:(\\d+) \\(gRPC\\), dataplane UDP 127\\.0\\.0\\.1 ports \\[(\\d+)]");

    @Test
    void workersJoinASwitchStartedAsAProcess() throws Exception {
        Process sw = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), SwitchMlCommand.class.getName(), "switch",
                "--bind", "127.0.0.1", "--port", "0", "--controller-bind", "127.0.0.1", "--controller-port", "0",
                "--pool-slots", "4096", "--job-quota", "1024")
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(sw.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<Matcher> ready = CompletableFuture.supplyAsync(() -> {
                try {
                    for (String line; (line = out.readLine()) != null; ) {
                        Matcher m = READY.matcher(line);
                        if (m.find()) {
                            return m;
                        }
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                throw new AssertionError("the switch ended without printing its ready line");
            });
            Matcher m = ready.get(60, TimeUnit.SECONDS);
            String controller = "127.0.0.1:" + m.group(1);
            List<CompletableFuture<Integer>> workers = List.of(0, 1).stream()
                    .map(rank -> CompletableFuture.supplyAsync(() -> SwitchMlCommand.commandLine().execute("worker",
                            "--controller", controller, "--workers", "2", "--rank", String.valueOf(rank),
                            "--job", "cli-test", "--size", "8KiB,1MiB", "--iters", "2", "--warmup", "0", "--verify")))
                    .toList();
            for (CompletableFuture<Integer> w : workers) {
                assertThat(w.get(120, TimeUnit.SECONDS)).as("worker exit code").isZero();
            }
        } finally {
            sw.destroy();
            assertThat(sw.waitFor(20, TimeUnit.SECONDS)).as("switch stops on SIGTERM").isTrue();
        }
    }
}
