package io.switchml.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * perf counts a process's system calls between start and stop only. The process is a cat whose input
 * this test writes line by line and whose echo it reads back: each line costs cat at least a read and a write.
 */
class SyscallCounterTest {
    private static final int LINES = 200;

    @Test
    void countsTheCallsBetweenStartAndStopOnly() throws Exception {
        assumeTrue(SyscallCounter.unavailableReason() == null, () -> "perf cannot count here: "
                + SyscallCounter.unavailableReason());
        Process cat = new ProcessBuilder("cat").start();
        try (SyscallCounter counter = SyscallCounter.attach(cat.pid())) {
            OutputStream in = cat.getOutputStream();
            BufferedReader out = new BufferedReader(new InputStreamReader(cat.getInputStream(), StandardCharsets.UTF_8));
            echo(in, out, LINES); // before start: not counted
            counter.start();
            echo(in, out, LINES);
            long counted = counter.stop();
            echo(in, out, LINES); // after stop: not counted
            // A read and a write per line; the first line's read may be one cat entered before the count began (it
            // blocks in read between lines), and system calls are counted as they enter: one fewer is as right.
            assertThat(counted).as("a read and a write per line while counting")
                    .isGreaterThanOrEqualTo(2L * LINES - 1).isLessThan(3L * 2 * LINES);
        } finally {
            cat.destroy();
        }
    }

    @Test
    void aProcessThatIsGoneIsReportedNotWaitedFor() throws Exception {
        assumeTrue(SyscallCounter.unavailableReason() == null, "perf cannot count here");
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        try (SyscallCounter counter = SyscallCounter.attach(gone.pid())) {
            assertThatThrownBy(counter::start).isInstanceOf(BenchException.class).hasMessageContaining("perf");
        }
    }

    private static void echo(OutputStream in, BufferedReader out, int lines) throws Exception {
        for (int i = 0; i < lines; i++) {
            in.write(("line " + i + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
            assertThat(out.readLine()).isEqualTo("line " + i);
        }
    }
}
