package io.switchml.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code switchml bench --drop} (the embedded switch's drop simulator) and the workers' fault injection options. */
class BenchUnderLossIT {
    @Test
    void resultsStayExactWhenTheSwitchAndTheWorkersLoseDuplicateAndDelayPackets() {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            assertThat(SwitchMlCommand.commandLine().execute("bench", "--workers", "3", "--size", "1MiB", "--iters", "3",
                    "--warmup", "1", "--verify", "--format", "json", "--drop", "0.01", "--fault-drop", "0.01",
                    "--fault-duplicate", "0.01", "--fault-delay-us", "300", "--set", "faultDelayRate=0.2",
                    "--set", "faultSeed=7")).as("exit code").isZero();
        } finally {
            System.setOut(saved);
        }
        String line = out.toString(StandardCharsets.UTF_8).strip();
        System.out.println("bench under loss: " + line);
        assertThat(line).contains("\"workers\": 3", "\"verified\": true");
        Matcher m = Pattern.compile("\"retransmissions\": (\\d+)").matcher(line);
        assertThat(m.find()).isTrue();
        assertThat(Long.parseLong(m.group(1))).as("retransmissions").isPositive();
    }

    @Test
    void switchDropsNeedTheEmbeddedSwitch() {
        CommandLine cl = SwitchMlCommand.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err));
        assertThat(cl.execute("bench", "--controller", "127.0.0.1:1", "--drop", "0.01")).isNotZero();
        assertThat(err.toString()).contains("switch drops need the embedded switch");
        assertThat(cl.execute("bench", "--drop", "1.5")).isNotZero();
        assertThat(err.toString()).contains("must be in [0, 1]");
    }
}
