package io.switchml.examples;

import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The guides' programs (docs/java-and-djl.md, docs/spark.md), run against an embedded switch as a user would run them against `switchml switch`. */
class ExamplesIT {
    private static AggregationService service;

    @BeforeAll
    static void start() {
        service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0);
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    private static String controller() {
        return "127.0.0.1:" + service.controllerPort();
    }

    @Test
    void plainAllReduceAveragesOverRanksThatShareOneJvm() {
        // Several contexts (ranks) in one JVM, each on its own thread: supported, each has its own sockets.
        int workers = 3;
        String job = "plain-" + System.nanoTime();
        List<CompletableFuture<float[]>> ranks = new ArrayList<>();
        for (int r = 0; r < workers; r++) {
            int rank = r;
            ranks.add(CompletableFuture.supplyAsync(() -> PlainAllReduce.run(controller(), job, rank, workers)));
        }
        for (CompletableFuture<float[]> rank : ranks) {
            float[] mean = rank.orTimeout(60, TimeUnit.SECONDS).join();
            assertThat(mean).hasSize(1 << 20).containsOnly(2f); // (1 + 2 + 3) / 3
        }
    }

    @Test
    void djlTrainingWithUnevenShardsEndsWithIdenticalParametersOnEveryRank() throws Exception {
        String job = "djl-" + System.nanoTime();
        List<String> outputs = runRanks(DjlTraining.class, job, 3, 7);
        for (String out : outputs) {
            assertThat(out).as("DJL's start-up logging is quiet").doesNotContain("Failed to detect GPU count")
                    .doesNotContain("INFO ai.djl");
        }
        assertThat(checksum(outputs, 1)).as("rank 1's parameters equal rank 0's").isEqualTo(checksum(outputs, 0));
    }

    @Test
    void tensorflowTrainingWithUnevenShardsEndsWithIdenticalVariablesOnEveryRank() throws Exception {
        String job = "tf-" + System.nanoTime();
        List<String> outputs = runRanks(TensorFlowTraining.class, job, 3, 7);
        assertThat(checksum(outputs, 1)).as("rank 1's variables equal rank 0's").isEqualTo(checksum(outputs, 0));
    }

    /** Runs one process per rank of {@code main} with that rank's number of batches; their outputs, each exited 0. */
    private static List<String> runRanks(Class<?> main, String job, int... batches) throws Exception {
        List<Process> processes = new ArrayList<>();
        List<CompletableFuture<String>> outputs = new ArrayList<>();
        try {
            for (int r = 0; r < batches.length; r++) {
                Process p = javaProcess(main, controller(), job, String.valueOf(r), String.valueOf(batches.length),
                        String.valueOf(batches[r]));
                processes.add(p);
                outputs.add(CompletableFuture.supplyAsync(() -> readAll(p)));
            }
            List<String> done = new ArrayList<>();
            for (int r = 0; r < processes.size(); r++) {
                Process p = processes.get(r);
                assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("rank %d finished within 120 s", r).isTrue();
                String out = outputs.get(r).get(10, TimeUnit.SECONDS);
                assertThat(p.exitValue()).as("rank %d's exit code; its output:%n%s", r, out).isZero();
                assertThat(out).as("one line when the rank joins")
                        .containsOnlyOnce("rank " + r + " of " + batches.length + " joined job '" + job + "'");
                done.add(out);
            }
            return done;
        } finally {
            processes.forEach(Process::destroyForcibly);
        }
    }

    /** The checksum rank {@code r} printed last. */
    private static String checksum(List<String> outputs, int r) {
        String out = outputs.get(r);
        String line = out.lines().filter(l -> l.startsWith("rank " + r + " parameters ")).findFirst().orElseThrow(
                () -> new AssertionError("rank " + r + " printed no checksum:\n" + out));
        return line.substring(line.lastIndexOf(' ') + 1);
    }

    private static Process javaProcess(Class<?> main, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-Dai.djl.offline=true", "-Dai.djl.pytorch.num_threads=1",
                "-Dai.djl.pytorch.num_interop_threads=1", "-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    private static String readAll(Process p) {
        try {
            return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(output unreadable: " + e + ")";
        }
    }
}
