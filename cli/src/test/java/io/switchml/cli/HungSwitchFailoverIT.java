package io.switchml.cli;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.client.WorkerStatistics;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;

import java.nio.FloatBuffer;
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
class HungSwitchFailoverIT {
    private static final Pattern READY = Pattern.compile("switchml switch ready: controller 127\\.0\\.0\\.1:(\\d+)");
    private static final int WORKERS = 2;

    @Test
    void aStoppedSwitchProcessIsLeftForTheStandbyWhichFinishesExactly() throws Exception {
        SwitchProcess active = SwitchProcess.start("--bind", "127.0.0.1", "--port", "0", "--controller-bind", "127.0.0.1",
                "--controller-port", "0");
        Matcher ready = READY.matcher(active.readyLine());
        assertThat(ready.find()).as("ready line: %s", active.readyLine()).isTrue();
        try (AggregationService standby = AggregationService.start(
                new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0)) {
            String activeController = "127.0.0.1:" + ready.group(1);
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
                active.signal("STOP");
                for (CompletableFuture<Void> op : ops) {
                    op.get(90, TimeUnit.SECONDS);
                }
                for (int r = 0; r < WORKERS; r++) {
                    assertThat(outputs[r]).as("rank %d", r).isEqualTo(expected);
                    WorkerStatistics.Snapshot s = contexts.get(r).statistics().snapshot();
                    assertThat(s.failovers()).isEqualTo(1);
                    assertThat(s.blocksKept() + s.blocksRedone() + s.blocksCopied()).isEqualTo((length + k - 1) / k); // blocks, the last one partial
                }
            } finally {
                for (SwitchMLContext c : contexts) {
                    c.close();
                }
            }
        } finally {
            active.signal("CONT");
            active.process().destroyForcibly();
            active.process().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
