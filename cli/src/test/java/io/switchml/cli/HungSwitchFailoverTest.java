package io.switchml.cli;

import io.switchml.client.ReduceOp;
import io.switchml.client.ReferenceAllReduce;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.client.WorkerStatistics;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A switch that hangs (its process stopped with SIGSTOP: sockets stay open, nothing is answered,
 * no connection breaks at once) is given up for the standby once no result came for the detection
 * time and its controller does not answer either, and every worker ends with the exact result.
 */
class HungSwitchFailoverTest {
    private static final Pattern READY = Pattern.compile("switchml switch ready: controller 127\\.0\\.0\\.1:(\\d+)");
    private static final int WORKERS = 2;

    @Test
    void aStoppedSwitchProcessIsLeftForTheStandbyWhichFinishesExactly() throws Exception {
        Process active = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), SwitchMlCommand.class.getName(), "switch",
                "--bind", "127.0.0.1", "--port", "0", "--controller-bind", "127.0.0.1", "--controller-port", "0")
                .redirectErrorStream(true).start();
        try (AggregationService standby = AggregationService.start(
                new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0)) {
            String activeController = "127.0.0.1:" + readyPort(active);
            String controllers = activeController + ",127.0.0.1:" + standby.controllerPort();
            int length = 4 << 20; // 16 MiB of float32
            float[][] inputs = new float[WORKERS][length];
            Random random = new Random(5);
            for (float[] in : inputs) {
                for (int i = 0; i < length; i++) {
                    in[i] = (float) random.nextGaussian();
                }
            }
            String job = "hung-" + System.nanoTime();
            List<CompletableFuture<SwitchMLContext>> joining = new ArrayList<>();
            for (int r = 0; r < WORKERS; r++) {
                SwitchMLConfig config = SwitchMLConfig.builder().controllers(controllers).job(job)
                        .rank(r).workers(WORKERS).failoverDetection(Duration.ofSeconds(2))
                        .joinTimeout(Duration.ofSeconds(30)).operationTimeout(Duration.ofSeconds(60)).build();
                joining.add(CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(config)));
            }
            List<SwitchMLContext> contexts = new ArrayList<>();
            for (CompletableFuture<SwitchMLContext> j : joining) {
                contexts.add(j.get(60, TimeUnit.SECONDS));
            }
            try {
                int k = contexts.get(0).config().elementsPerPacket();
                float[] expected = ReferenceAllReduce.floats(inputs, k, ReduceOp.SUM);
                float[][] outputs = new float[WORKERS][length];
                // A first all-reduce through the active switch, then the switch hangs during the second.
                contexts.get(0).allReduceAsync(new float[]{1}, ReduceOp.SUM);
                contexts.get(1).allReduce(new float[]{1}, ReduceOp.SUM);
                List<CompletableFuture<Void>> ops = new ArrayList<>();
                for (int r = 0; r < WORKERS; r++) {
                    ops.add(contexts.get(r).allReduceAsync(FloatBuffer.wrap(inputs[r]), FloatBuffer.wrap(outputs[r]), ReduceOp.SUM));
                }
                signal(active, "STOP");
                for (CompletableFuture<Void> op : ops) {
                    op.get(90, TimeUnit.SECONDS);
                }
                for (int r = 0; r < WORKERS; r++) {
                    assertThat(outputs[r]).as("rank %d", r).isEqualTo(expected);
                    WorkerStatistics.Snapshot s = contexts.get(r).statistics().snapshot();
                    assertThat(s.failovers()).isEqualTo(1);
                    assertThat(s.blocksKept() + s.blocksRedone() + s.blocksCopied()).isEqualTo(length / k);
                }
            } finally {
                for (SwitchMLContext c : contexts) {
                    c.close();
                }
            }
        } finally {
            signal(active, "CONT");
            active.destroyForcibly();
            active.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static int readyPort(Process sw) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(sw.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<Integer> ready = CompletableFuture.supplyAsync(() -> {
            try {
                for (String line; (line = out.readLine()) != null; ) {
                    Matcher m = READY.matcher(line);
                    if (m.find()) {
                        return Integer.parseInt(m.group(1));
                    }
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            throw new AssertionError("the switch ended without printing its ready line");
        });
        int port = ready.get(60, TimeUnit.SECONDS);
        // Keep reading, so the switch never blocks on a full pipe.
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // discard
                }
            } catch (java.io.IOException ignored) {
                // the switch ended
            }
        }, "switch-output");
        drain.setDaemon(true);
        drain.start();
        return port;
    }

    private static void signal(Process p, String signal) throws Exception {
        new ProcessBuilder("kill", "-" + signal, String.valueOf(p.pid())).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
    }
}
