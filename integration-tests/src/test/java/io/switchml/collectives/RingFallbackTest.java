package io.switchml.collectives;

import io.switchml.api.ReduceOp;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code switchml.fallback=ring}: the only switch dies during an all-reduce, and the workers finish
 * it, exactly, with ring all-reduce between themselves (endpoints exchanged at join).
 */
class RingFallbackTest {
    @Test
    void theRingFinishesAnIntAllReduceTheSwitchStarted() throws Exception {
        int workers = 3;
        int length = 2 << 20;
        int[][] inputs = TestTensors.ints(workers, length, 41);
        int[] expected = TestTensors.expectedInts(inputs, ReduceOp.SUM);
        try (AggregationService service = startSwitch()) {
            List<SwitchMLContext> contexts = join(service, workers);
            try {
                int[][] data = new int[workers][];
                List<CompletableFuture<Void>> ops = new ArrayList<>();
                for (int r = 0; r < workers; r++) {
                    data[r] = inputs[r].clone();
                    ops.add(contexts.get(r).allReduceAsync(data[r], ReduceOp.SUM)); // in place
                }
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (contexts.get(0).statistics().snapshot().packetsReceived() < length / 2048 / 3
                        && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                service.close();
                for (CompletableFuture<Void> op : ops) {
                    op.get(60, TimeUnit.SECONDS);
                }
                for (int r = 0; r < workers; r++) {
                    assertThat(data[r]).as("rank %d", r).isEqualTo(expected);
                    WorkerStatistics.Snapshot s = contexts.get(r).statistics().snapshot();
                    assertThat(s.failovers()).isEqualTo(1);
                    assertThat(s.blocksKept()).isPositive();
                    assertThat(s.blocksRedone() + s.blocksCopied()).isPositive();
                }
                // Later all-reduces run on the ring too.
                assertThat(contexts.get(0).jobNumber()).isEqualTo(-1);
                int[][] next = TestTensors.ints(workers, 1000, 42);
                int[] expectedNext = TestTensors.expectedInts(next, ReduceOp.SUM);
                List<CompletableFuture<Void>> more = new ArrayList<>();
                for (int r = 0; r < workers; r++) {
                    more.add(contexts.get(r).allReduceAsync(next[r], ReduceOp.SUM));
                }
                for (int r = 0; r < workers; r++) {
                    more.get(r).get(30, TimeUnit.SECONDS);
                    assertThat(next[r]).isEqualTo(expectedNext);
                }
            } finally {
                contexts.forEach(SwitchMLContext::close);
            }
        }
    }

    @Test
    void aFloatAllReduceNobodyHadResultsOfRunsWholeOnTheRing() throws Exception {
        int workers = 2;
        int length = 1 << 20;
        float[][] inputs = TestTensors.floats(workers, length, 43);
        float[] expected = RingReference.floats(inputs, ReduceOp.MEAN);
        try (AggregationService service = startSwitch()) {
            List<SwitchMLContext> contexts = join(service, workers);
            try {
                float[][] outputs = new float[workers][length];
                // Rank 1 is late: the switch dies before any block could be summed.
                CompletableFuture<Void> first = contexts.get(0).allReduceAsync(FloatBuffer.wrap(inputs[0]),
                        FloatBuffer.wrap(outputs[0]), ReduceOp.MEAN);
                Thread.sleep(200);
                service.close();
                CompletableFuture<Void> late = contexts.get(1).allReduceAsync(FloatBuffer.wrap(inputs[1]),
                        FloatBuffer.wrap(outputs[1]), ReduceOp.MEAN);
                first.get(60, TimeUnit.SECONDS);
                late.get(60, TimeUnit.SECONDS);
                for (int r = 0; r < workers; r++) {
                    assertThat(outputs[r]).as("rank %d", r).isEqualTo(expected);
                    assertThat(contexts.get(r).statistics().snapshot().failovers()).isEqualTo(1);
                }
            } finally {
                contexts.forEach(SwitchMLContext::close);
            }
        }
    }

    private static AggregationService startSwitch() {
        return AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0);
    }

    private static List<SwitchMLContext> join(AggregationService service, int workers) {
        String job = "fallback-" + System.nanoTime();
        List<CompletableFuture<SwitchMLContext>> joining = new ArrayList<>();
        for (int r = 0; r < workers; r++) {
            SwitchMLConfig config = SwitchMLConfig.builder().controller("127.0.0.1:" + service.controllerPort())
                    .fallback("ring").job(job).rank(r).workers(workers).joinTimeout(Duration.ofSeconds(30))
                    .elementsPerPacket(2048).slotsPerThread(64).build(); // fixed: the tests count packets of this size
            joining.add(CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(config)));
        }
        List<SwitchMLContext> contexts = new ArrayList<>();
        for (CompletableFuture<SwitchMLContext> f : joining) {
            contexts.add(f.join());
        }
        return contexts;
    }
}
