package io.switchml.cli;

import io.switchml.launch.Rack;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code switchml bench --rack}: the emulated rack of network namespaces (needs root). */
class RackBenchIT {
    @Test
    void benchInTheRackVerifiesEveryAlgorithmAndLeavesNoNamespaceOrLinkBehind() throws Exception {
        benchInTheRack("fabric", 2);
    }

    @Test
    void withASwitchHostTheSwitchRunsBehindItsOwnLink() throws Exception {
        benchInTheRack("1-host", 2, "--switch-hosts", "1");
    }

    @Test
    void withTwoSwitchHostsTheJobIsShardedOverThem() throws Exception {
        benchInTheRack("2-host", 2, "--switch-hosts", "2");
    }

    @Test
    void hostsOfTwoRanksSendOneContributionEachThroughTheirAgent() throws Exception {
        benchInTheRack("2x2-agent-per-host", 4, "--hosts", "2", "--ranks-per-host", "2");
    }

    private static void benchInTheRack(String topology, int workers, String... options) throws Exception {
        assumeTrue(Rack.effectiveUid() == 0, "skipped: the emulated rack needs root (this test runs as uid "
                + Rack.effectiveUid() + ")");
        String probe = "smlprobe" + ProcessHandle.current().pid();
        assumeTrue(permitted("ip", "netns", "add", probe),
                "skipped: network namespaces are not available here ('ip netns add' failed or iproute2 is missing)");
        assumeTrue(permitted("tc", "-V"), "skipped: tc (iproute2) is missing");
        sh("ip", "netns", "del", probe);

        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        int code;
        try {
            List<String> args = new java.util.ArrayList<>(List.of("bench", "--rack", "--rate", "200mbit", "--workers",
                    "2", "--size", "256KiB", "--iters", "1", "--warmup", "0", "--verify", "--algo", "switchml,ring",
                    "--format", "json"));
            args.addAll(List.of(options));
            code = SwitchMlCommand.commandLine().execute(args.toArray(String[]::new));
        } finally {
            System.setOut(saved);
        }
        List<String> rows = out.toString(StandardCharsets.UTF_8).strip().lines().toList();
        System.out.println("bench --rack:\n" + String.join("\n", rows));
        assertThat(code).as("exit code").isZero();
        assertThat(rows).hasSize(2);
        assertThat(rows.get(0)).contains("\"algo\": \"switchml\"", "\"workers\": " + workers, "\"verified\": true",
                "\"rate_bps\": 200000000", "\"topology\": \"" + topology + "\"");
        assertThat(rows.get(1)).contains("\"algo\": \"ring\"", "\"workers\": " + workers, "\"verified\": true",
                "\"rate_bps\": 200000000", "\"topology\": \"" + topology + "\"");

        String prefix = "sml" + ProcessHandle.current().pid();
        assertThat(sh("ip", "netns", "list").output()).as("namespaces left behind").doesNotContain(prefix);
        assertThat(sh("ip", "link").output()).as("links left behind").doesNotContain(prefix);
    }

    @Test
    void withoutRootTheRackSaysItNeedsRoot() {
        assumeTrue(Rack.effectiveUid() != 0, "skipped: running as root (RackIT checks the message with a fake uid)");
        CommandLine cl = SwitchMlCommand.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err));
        assertThat(cl.execute("bench", "--rack", "--rate", "100mbit", "--workers", "2", "--size", "4KiB")).isNotZero();
        assertThat(err.toString()).contains("needs root");
    }

    @Test
    void rackOptionsAreChecked() {
        CommandLine cl = SwitchMlCommand.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err));
        assertThat(cl.execute("bench", "--rack", "--workers", "2")).isNotZero();
        assertThat(err.toString()).contains("--rack needs --rate");
        assertThat(cl.execute("bench", "--rate", "1gbit")).isNotZero();
        assertThat(err.toString()).contains("--rate needs --rack");
        assertThat(cl.execute("bench", "--rack", "--rate", "1gbit", "--drop", "1")).isNotZero();
        assertThat(err.toString()).contains("drop probability must be in [0, 1)");
        assertThat(cl.execute("bench", "--rack", "--rate", "1gbit", "--controller", "127.0.0.1:1")).isNotZero();
        assertThat(err.toString()).contains("starts its own switch");
        assertThat(cl.execute("bench", "--switch-hosts", "2", "--controller", "127.0.0.1:1")).isNotZero();
        assertThat(err.toString()).contains("cannot use a running one");
        assertThat(cl.execute("bench", "--leaves", "2", "--switch-hosts", "2", "--workers", "4")).isNotZero();
        assertThat(err.toString()).contains("choose one");
        assertThat(cl.execute("bench", "--rack", "--rate", "1gbit", "--switch-hosts", "17")).isNotZero();
        assertThat(err.toString()).contains("at most 16 hosts");
        assertThat(cl.execute("bench", "--rack", "--rate", "1gbit", "--switch-hosts", "0")).isNotZero();
        assertThat(err.toString()).contains("--switch-hosts must be at least 1");
    }

    private record Result(int code, String output) {
    }

    /** Whether the command runs and succeeds; false also when it is not installed. */
    private static boolean permitted(String... command) throws InterruptedException {
        try {
            return sh(command).code() == 0;
        } catch (IOException notInstalled) {
            return false;
        }
    }

    private static Result sh(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new Result(p.exitValue(), output);
    }
}
