package io.switchml.cli;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A two-level hierarchy (docs/ARCHITECTURE.md section 9) as scripts start it: a spine and two leaves,
 * each `switchml switch` in its own process, and four `switchml worker`s, ranks 0..1 at leaf 0 and
 * 2..3 at leaf 1, whose results verify.
 */
class SwitchHierarchyProcessIT {
    private static final Pattern CONTROLLER = Pattern.compile("controller 127\\.0\\.0\\.1:(\\d+) \\(gRPC\\)");

    @Test
    void workersAtTwoLeafProcessesGetVerifiedSumsThroughASpineProcess() throws Exception {
        List<SwitchProcess> switches = new ArrayList<>();
        try {
            SwitchProcess spine = start(switches, "--bind", "127.0.0.1", "--port", "0", "--controller-bind", "127.0.0.1",
                    "--controller-port", "0");
            String spineController = "127.0.0.1:" + controllerPort(spine);
            List<String> leaves = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                SwitchProcess leaf = start(switches, "--bind", "127.0.0.1", "--port", "0", "--controller-bind", "127.0.0.1",
                        "--controller-port", "0", "--spine", spineController, "--leaf-index", String.valueOf(i),
                        "--leaves", "2");
                assertThat(leaf.readyLine()).contains(", leaf " + i + " of 2 under the spine at " + spineController);
                leaves.add("127.0.0.1:" + controllerPort(leaf));
            }
            List<CompletableFuture<Integer>> workers = List.of(0, 1, 2, 3).stream()
                    .map(rank -> CompletableFuture.supplyAsync(() -> SwitchMlCommand.commandLine().execute("worker",
                            "--controller", leaves.get(rank / 2), "--workers", "4", "--rank", String.valueOf(rank),
                            "--job", "tree-cli-test", "--size", "8KiB,1MiB", "--iters", "2", "--warmup", "0", "--verify")))
                    .toList();
            for (CompletableFuture<Integer> w : workers) {
                assertThat(w.get(120, TimeUnit.SECONDS)).as("worker exit code").isZero();
            }
        } finally {
            for (SwitchProcess s : switches) {
                s.process().destroy();
                assertThat(s.process().waitFor(20, TimeUnit.SECONDS)).as("switch stops on SIGTERM").isTrue();
            }
        }
    }

    @Test
    void aLeafNeedsAllThreeOptions() {
        Run run = Run.of("switch", "--port", "0", "--controller-port", "0", "--spine", "127.0.0.1:1");
        assertThat(run.exitCode()).isNotZero();
        assertThat(run.err()).contains("a leaf needs --spine HOST:PORT, --leaf-index I and --leaves L together");
        Run credentialsAlone = Run.of("switch", "--port", "0", "--controller-port", "0", "--spine-token-file", "/nonexistent");
        assertThat(credentialsAlone.exitCode()).isNotZero();
        assertThat(credentialsAlone.err()).contains("the --spine-tls-* and --spine-token-file options are a leaf's");
        Run halfTls = Run.of("switch", "--port", "0", "--controller-port", "0", "--spine", "127.0.0.1:1", "--leaf-index",
                "0", "--leaves", "2", "--spine-tls-cert", "/nonexistent");
        assertThat(halfTls.exitCode()).isNotZero();
        assertThat(halfTls.err()).contains("--spine-tls-cert and --spine-tls-key go together");
    }

    private static SwitchProcess start(List<SwitchProcess> started, String... args) throws Exception {
        SwitchProcess s = SwitchProcess.start(args);
        started.add(s);
        return s;
    }

    private static int controllerPort(SwitchProcess s) {
        Matcher m = CONTROLLER.matcher(s.readyLine());
        assertThat(m.find()).as("ready line: %s", s.readyLine()).isTrue();
        return Integer.parseInt(m.group(1));
    }
}
