package io.switchml.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the rack stops its switch: SIGTERM with the switch's output still read, so that what the switch and the
 * processes it starts write as they close (a JDK 25 switch's ahead-of-time cache, assembled by a JVM it starts at
 * exit) is read to its end rather than met by a closed pipe.
 */
class RackSwitchTest {
    private static final String READY = "switchml switch ready: test";

    @TempDir
    Path dir;

    @Test
    void stopReadsWhatTheSwitchAndItsChildrenWriteAsTheyClose() throws Exception {
        // A switch that, on SIGTERM, writes a line and starts a process that writes one too, then exits 0; a pipe
        // without a reader would end the shell with SIGPIPE at its first line (exit status 141).
        Process sw = new ProcessBuilder("sh", "-c", "trap 'sleep 0.2; echo closing; sh -c \"echo its child closing\"; exit 0' TERM; "
                + "echo '" + READY + "'; while :; do sleep 0.05; done").redirectErrorStream(true).start();
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        assertThat(RackSwitch.drain(sw, "switch", new PrintStream(progress, true, StandardCharsets.UTF_8),
                new ConcurrentLinkedDeque<>()).get(30, TimeUnit.SECONDS)).as("the ready line").isTrue();

        RackSwitch.stop(sw);

        assertThat(sw.isAlive()).isFalse();
        assertThat(sw.exitValue()).as("its own exit, not SIGPIPE's").isZero();
        assertThat(progress.toString(StandardCharsets.UTF_8).lines()).containsExactly("[switch] " + READY,
                "[switch] closing", "[switch] its child closing");
    }

    /** On a real JDK 25: a switch JVM that trains its role's cache, stopped as the rack stops it, leaves it whole. */
    @Test
    void aSwitchJvmStoppedWhileItTrainsTheCacheWritesItWhole() throws Exception {
        Optional<Path> java = AotCacheTest.jdk25();
        assumeTrue(java.isPresent(), "no JDK 25 on this machine (SWITCHML_JAVA, /usr/lib/jvm): the cache needs one");
        String classPath = AotCacheTest.probeJar(dir.resolve("probe.jar")).toString();
        AotCache cache = AotCache.of("switch", null, 25, dir.resolve("aot"), java.get().toString(), List.of(), classPath)
                .orElseThrow();
        AotCache.Plan training = cache.plan();
        assertThat(training.trains()).isTrue();
        List<String> command = new ArrayList<>(List.of(java.get().toString()));
        command.addAll(training.options());
        command.addAll(List.of("-cp", classPath, AotProbe.class.getName(), "serve", READY));
        ChildJvm jvm = new ChildJvm(command, training);
        Process sw = new ProcessBuilder(jvm.command()).redirectErrorStream(true).start();
        jvm.started(sw);
        sw.getOutputStream().close();
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        assertThat(RackSwitch.drain(sw, "switch", new PrintStream(progress, true, StandardCharsets.UTF_8),
                new ConcurrentLinkedDeque<>()).get(120, TimeUnit.SECONDS)).as("the ready line").isTrue();
        assertThat(ChildJvm.writesCacheAtExit(sw.toHandle())).isTrue();

        RackSwitch.stop(sw);

        assertThat(sw.isAlive()).isFalse();
        assertThat(cache.failed()).as("the key is not marked failed").doesNotExist();
        assertThat(cache.plan().options()).as("the next JVM of the role reads the cache").first()
                .isEqualTo("-XX:AOTCache=" + cache.cache());
        assertThat(progress.toString(StandardCharsets.UTF_8).lines()).as("the JDK's notices are left out")
                .containsExactly("[switch] probe 59999997", "[switch] " + READY);
    }
}
