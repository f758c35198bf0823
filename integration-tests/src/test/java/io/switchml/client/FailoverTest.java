package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.api.SwitchUnavailableException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The active switch dies in the middle of an all-reduce: the workers move to the standby, redo or
 * copy only what some worker is missing, and every worker ends with the exact result.
 */
class FailoverTest {
    private static final int K = 2048;

    @Test
    void aLargeFloatAllReduceFinishesExactlyOnTheStandby() throws Exception {
        int workers = 2;
        int length = 16 << 20; // 64 MiB of float32
        int blocks = length / K;
        float[][] inputs = TestTensors.floatsByRank(31, workers, length);
        float[] expected = ReferenceAllReduce.floats(inputs, K, ReduceOp.SUM);
        try (FailoverCluster cluster = new FailoverCluster(workers, 2, List.of(), b -> b)) {
            float[][] outputs = new float[workers][length];
            List<CompletableFuture<Void>> ops = new ArrayList<>();
            for (int r = 0; r < workers; r++) {
                ops.add(cluster.contexts.get(r).allReduceAsync(java.nio.FloatBuffer.wrap(inputs[r]), java.nio.FloatBuffer.wrap(outputs[r]), ReduceOp.SUM));
            }
            cluster.killActiveSwitchAfter(blocks / 3);
            for (CompletableFuture<Void> op : ops) {
                op.get(60, TimeUnit.SECONDS);
            }
            for (int r = 0; r < workers; r++) {
                assertThat(outputs[r]).as("rank %d", r).isEqualTo(expected);
                WorkerStatistics.Snapshot s = cluster.contexts.get(r).statistics().snapshot();
                System.out.printf("float failover, rank %d: %d blocks kept, %d redone, %d copied of %d%n", r,
                        s.blocksKept(), s.blocksRedone(), s.blocksCopied(), blocks);
                assertThat(s.failovers()).isEqualTo(1);
                assertThat(s.blocksKept() + s.blocksRedone() + s.blocksCopied()).isEqualTo(blocks);
                assertThat(s.blocksKept()).as("blocks kept from the lost switch").isPositive();
                assertThat(s.blocksRedone() + s.blocksCopied()).as("blocks done again on the standby")
                        .isPositive().isLessThan(blocks);
            }
            assertThat(cluster.contexts.get(0).jobNumber()).isNotNegative();
            // The job goes on at the standby.
            float[] next = {1, 2, 3};
            List<float[]> again = cluster.contexts.stream().map(c -> next.clone()).toList();
            List<CompletableFuture<Void>> more = new ArrayList<>();
            for (int r = 0; r < workers; r++) {
                more.add(cluster.contexts.get(r).allReduceAsync(again.get(r), ReduceOp.SUM));
            }
            for (int r = 0; r < workers; r++) {
                more.get(r).get(30, TimeUnit.SECONDS);
                assertThat(again.get(r)).containsExactly(2, 4, 6);
            }
        }
    }

    @Test
    void anInPlaceIntAllReduceAndTheOnesQueuedBehindItFinishExactly() throws Exception {
        int workers = 3;
        int length = 3 << 20;
        int[][] inputs = TestTensors.intsByRank(32, workers, length);
        int[] expected = ReferenceAllReduce.ints(inputs, ReduceOp.SUM);
        int[][] second = TestTensors.intsByRank(33, workers, 5000);
        int[] expectedSecond = ReferenceAllReduce.ints(second, ReduceOp.SUM);
        // 1 % loss each way: at the failover some results have reached some workers and not others,
        // so blocks are copied too (in place: their inputs are gone on the workers that hold them).
        try (FailoverCluster cluster = new FailoverCluster(workers, 2, List.of(),
                b -> b.threads(2).slotsPerThread(32).faultInjection(new FaultInjection(0.01, 0, 1, 0, 7)))) {
            int[][] data = new int[workers][];
            int[][] queued = new int[workers][];
            List<CompletableFuture<Void>> ops = new ArrayList<>();
            for (int r = 0; r < workers; r++) {
                data[r] = inputs[r].clone();
                queued[r] = second[r].clone();
                ops.add(cluster.contexts.get(r).allReduceAsync(data[r], ReduceOp.SUM));
                ops.add(cluster.contexts.get(r).allReduceAsync(queued[r], ReduceOp.SUM));
            }
            cluster.killActiveSwitchAfter(length / K / 3);
            for (CompletableFuture<Void> op : ops) {
                op.get(60, TimeUnit.SECONDS);
            }
            for (int r = 0; r < workers; r++) {
                assertThat(data[r]).as("rank %d", r).isEqualTo(expected);
                assertThat(queued[r]).as("rank %d, queued all-reduce", r).isEqualTo(expectedSecond);
                WorkerStatistics.Snapshot s = cluster.contexts.get(r).statistics().snapshot();
                System.out.printf("in-place int failover, rank %d: %d blocks kept, %d redone, %d copied%n", r,
                        s.blocksKept(), s.blocksRedone(), s.blocksCopied());
                assertThat(s.failovers()).isEqualTo(1);
                assertThat(s.blocksKept()).isPositive();
                assertThat(s.blocksRedone() + s.blocksCopied()).isPositive();
            }
        }
    }

    @Test
    void withNoSwitchLeftAndNoFallbackTheWorkersFailClearlyAndAtOnce() throws Exception {
        String nobody = "127.0.0.1:" + freePort();
        try (FailoverCluster cluster = new FailoverCluster(2, 1, List.of(nobody), b -> b)) {
            List<CompletableFuture<Void>> ops = new ArrayList<>();
            for (SwitchMLContext c : cluster.contexts) {
                float[] ones = new float[4 << 20];
                java.util.Arrays.fill(ones, 1f); // values, not zeros, which the job would skip (and finish early)
                ops.add(c.allReduceAsync(ones, ReduceOp.SUM));
            }
            cluster.killActiveSwitchAfter(100);
            long start = System.nanoTime();
            for (CompletableFuture<Void> op : ops) {
                SwitchUnavailableException e = LivenessTest.failure(op, SwitchUnavailableException.class);
                assertThat(e).hasMessageContaining("no switch is left to fail over to")
                        .hasMessageContaining(nobody)
                        .hasMessageContaining("switchml.fallback is none");
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            CompletableFuture<Void> later = cluster.contexts.get(0).allReduceAsync(new int[3], ReduceOp.SUM);
            LivenessTest.failure(later, SwitchUnavailableException.class);
        }
    }

    private static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
