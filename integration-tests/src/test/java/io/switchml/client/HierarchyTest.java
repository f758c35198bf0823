package io.switchml.client;

import io.switchml.api.AllReduceTimeoutException;
import io.switchml.api.ControlPlaneException;
import io.switchml.api.RankLeftException;
import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchUnavailableException;
import io.switchml.api.WorkerFailedException;
import io.switchml.control.ControllerCredentials;
import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static io.switchml.client.AllReduceExactnessTest.checkFloatSum;
import static io.switchml.client.AllReduceExactnessTest.checkIntSum;
import static io.switchml.client.LivenessTest.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two levels (docs/ARCHITECTURE.md section 9): workers at leaf switches whose partial sums go on
 * to a spine. Results are exact and bit-identical (as one switch would give, by
 * {@code ReferenceAllReduce}), loss at either level is recovered, barriers and broadcasts span the
 * leaves, and a dead rank, leaf or spine fails every worker with an error that says what died.
 */
class HierarchyTest {
    /** Far beyond what the failure tests wait: a failure they see comes from the liveness watches. */
    private static final Duration LONG_OPERATION_TIMEOUT = Duration.ofSeconds(60);
    private static final String SPINE_TOKEN = "spine-operator-token-for-the-leaves-0123456789";

    @Test
    void sumsThroughTwoLeavesAndASpineAreExact() {
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 4, 1, b -> b)) {
            long seed = 11;
            for (int size : new int[] {1, 2047, 2049, 64 * 2048 + 13, 300_001}) {
                checkFloatSum(cluster, seed, size, 2048);
                checkIntSum(cluster, seed++, size);
            }
            assertThat(counter(cluster.service, "contributions")).as("the spine summed the leaves' partials").isPositive();
            for (AggregationService leaf : cluster.leaves) {
                assertThat(counter(leaf, "partials_forwarded")).isPositive();
                assertThat(counter(leaf, "spine_results")).isPositive();
            }
        }
    }

    @Test
    void unevenLeavesSeveralThreadsAndSwitchPorts() {
        // 5 ranks over 2 leaves: ranks 0..1 and 2..4; 3 threads over 2 ports at every switch.
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 5, 2, b -> b.elementsPerPacket(64).threads(3).slotsPerThread(8))) {
            long seed = 5;
            for (int size : new int[] {1, 63, 65, 191, 100_000}) {
                checkFloatSum(cluster, seed, size, 64);
                checkIntSum(cluster, seed++, size);
            }
        }
    }

    @Test
    void lossAtTheLeavesAndAtTheSpineIsRecovered() {
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 4, 1,
                b -> b.elementsPerPacket(256).slotsPerThread(16).retransmitMin(Duration.ofMillis(5)))) {
            cluster.service.dataplane().setDropProbabilities(0.02, 0.02);
            cluster.leaves.forEach(leaf -> leaf.dataplane().setDropProbabilities(0.02, 0.02));
            checkFloatSum(cluster, 21, 40_000, 256);
            checkIntSum(cluster, 22, 40_000);
            long spineDrops = counter(cluster.service, "ingress_simulated_drops") + counter(cluster.service, "egress_simulated_drops");
            assertThat(spineDrops).as("the spine lost packets").isPositive();
            assertThat(cluster.statisticsTotals()[1]).as("workers retransmitted").isPositive();
            long reforwarded = cluster.leaves.stream().mapToLong(l -> counter(l, "partials_forwarded") - counter(l, "spine_results")).sum();
            assertThat(reforwarded).as("leaves sent partials again on their workers' retransmissions").isPositive();
        }
    }

    @Test
    void barriersAndBroadcastsSpanTheLeaves() {
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 4, 1, b -> b)) {
            cluster.onEveryWorker((rank, ctx) -> {
                ctx.barrier();
                return null;
            });
            for (int root : new int[] {0, 3}) {
                List<String> received = cluster.onEveryWorker((rank, ctx) -> new String(
                        ctx.broadcast(("from " + rank).getBytes(StandardCharsets.UTF_8), root), StandardCharsets.UTF_8));
                assertThat(received).containsOnly("from " + root);
            }
        }
    }

    @Test
    void twoJobsRunAtOnceThroughTheSameLeavesAndSpine() {
        try (LocalCluster first = LocalCluster.hierarchy(2, 4, 1, b -> b);
             LocalCluster second = LocalCluster.onHierarchy(first, "tree-second-" + System.nanoTime(), 2, b -> b)) {
            // Both jobs' partials leave each leaf from the same switch port; the spine tells them apart by job number.
            List<Thread> jobs = List.of(new Thread(() -> checkFloatSum(first, 21, 40 * 2048 + 3, 2048)),
                    new Thread(() -> checkIntSum(second, 22, 40 * 2048 + 5)));
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            jobs.forEach(t -> t.setUncaughtExceptionHandler((thread, e) -> failures.add(e)));
            jobs.forEach(Thread::start);
            for (Thread t : jobs) {
                assertThat(join(t)).as("job thread finished").isTrue();
            }
            assertThat(failures).isEmpty();
            assertThat(first.contexts.get(0).jobNumber()).isNotEqualTo(second.contexts.get(0).jobNumber());
            second.close(); // one job ends; the other goes on through the same leaf sources at the spine
            checkIntSum(first, 23, 5 * 2048);
        }
    }

    private static boolean join(Thread t) {
        try {
            t.join(60_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !t.isAlive();
    }

    @Test
    void aSpineThatRequiresJobSecretsTakesLeavesWithItsOperatorToken() {
        ControllerSecurity protectedSpine = new ControllerSecurity().requireJobSecrets(true).operatorToken(SPINE_TOKEN);
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 4, 1, protectedSpine,
                new ControllerCredentials(null, null, null, SPINE_TOKEN, null), b -> b)) {
            checkFloatSum(cluster, 5, 3 * 2048 + 1, 2048);
        }
        // Without the token the spine refuses the leaves' join, and the workers are told why.
        assertThatThrownBy(() -> LocalCluster.hierarchy(2, 2, 1, protectedSpine, ControllerCredentials.NONE,
                b -> b.joinTimeout(Duration.ofSeconds(10)))).hasStackTraceContaining("at the spine")
                .hasStackTraceContaining("requires a job secret").hasStackTraceContaining("--spine-token-file");
    }

    @Test
    void aRankAtTheWrongLeafIsToldWhichLeafServesIt() {
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 2, 1, b -> b)) {
            SwitchMLConfig config = SwitchMLConfig.builder().controller("127.0.0.1:" + cluster.leaves.get(0).controllerPort())
                    .job("wrong-leaf").rank(3).workers(4).joinTimeout(Duration.ofSeconds(5)).build();
            assertThatThrownBy(() -> SwitchMLContext.connect(config)).isInstanceOf(ControlPlaneException.class)
                    .hasMessageContaining("rank 3 of job 'wrong-leaf' (4 workers over 2 leaves) is served by leaf 1 (ranks 2..3)")
                    .hasMessageContaining("this switch is leaf 0 (ranks 0..1)");
        }
    }

    @Test
    void aTimeoutAtALeafNamesTheJobsRankItWaitsFor() {
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 4, 1, b -> b.operationTimeout(Duration.ofMillis(1500)))) {
            // Rank 3 is alive but never submits; rank 2, at the same leaf, hears which rank its leaf waits for.
            List<CompletableFuture<Void>> ops = List.of(0, 1, 2).stream()
                    .map(r -> cluster.contexts.get(r).allReduceAsync(new float[20_000], ReduceOp.SUM)).toList();
            AllReduceTimeoutException e = failure(ops.get(2), AllReduceTimeoutException.class);
            assertThat(e.missingRanks()).containsExactly(3);
            // Ranks 0 and 1, whose leaf has both their contributions, hear that the spine waits for the other leaf.
            for (int r : new int[] {0, 1}) {
                AllReduceTimeoutException atOtherLeaf = failure(ops.get(r), AllReduceTimeoutException.class);
                assertThat(atOtherLeaf).hasMessageContaining("timed out after 1500 ms")
                        .hasMessageContaining("its spine is still waiting for leaf 1 (ranks 2..3)");
                assertThat(atOtherLeaf.missingRanks()).containsExactly(2, 3);
            }
        }
    }

    @Test
    void aRankThatLeavesIsHeardAtBothLeaves() {
        // Three leaves of one rank each: the leaver is its leaf's last rank; the leaf relays it, then leaves the spine.
        try (LocalCluster cluster = LocalCluster.hierarchy(3, 3, 1, b -> b.operationTimeout(LONG_OPERATION_TIMEOUT))) {
            cluster.contexts.stream().map(c -> c.allReduceAsync(new float[5_000], ReduceOp.SUM)).toList()
                    .forEach(CompletableFuture::join);
            List<CompletableFuture<Void>> waiting = List.of(0, 1).stream()
                    .map(r -> cluster.contexts.get(r).allReduceAsync(new float[5_000], ReduceOp.SUM)).toList();
            cluster.contexts.get(2).close();
            for (CompletableFuture<Void> op : waiting) {
                RankLeftException e = failure(op, RankLeftException.class);
                assertThat(e.leftRank()).isEqualTo(2);
                assertThat(e.leftOperations()).isEqualTo(1);
            }
        }
        // Two ranks per leaf: rank 3 leaves while rank 2, at its leaf, stays; ranks 0 and 1 hear it from the spine.
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 4, 1, b -> b.operationTimeout(LONG_OPERATION_TIMEOUT))) {
            cluster.contexts.stream().map(c -> c.allReduceAsync(new float[5_000], ReduceOp.SUM)).toList()
                    .forEach(CompletableFuture::join);
            List<CompletableFuture<Void>> waiting = List.of(0, 1, 2).stream()
                    .map(r -> cluster.contexts.get(r).allReduceAsync(new float[5_000], ReduceOp.SUM)).toList();
            cluster.contexts.get(3).close();
            for (CompletableFuture<Void> op : waiting) {
                RankLeftException e = failure(op, RankLeftException.class);
                assertThat(e.leftRank()).isEqualTo(3);
                assertThat(e.leftOperations()).isEqualTo(1);
                assertThat(e).hasMessageContaining("rank 3 left job");
            }
        }
    }

    @Test
    void aDeadRankFailsEveryWorkerAtBothLeaves() {
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 4, 1, b -> b.operationTimeout(LONG_OPERATION_TIMEOUT))) {
            List<CompletableFuture<Void>> ops = List.of(0, 1, 2).stream()
                    .map(r -> cluster.contexts.get(r).allReduceAsync(new float[100_000], ReduceOp.SUM)).toList();
            cluster.contexts.get(3).abandon();
            // Rank 2 shares rank 3's leaf, which saw it die; ranks 0 and 1 hear it from the spine.
            assertThat(failure(ops.get(2), WorkerFailedException.class).failedRanks()).containsExactly(3);
            for (int r : new int[] {0, 1}) {
                WorkerFailedException e = failure(ops.get(r), WorkerFailedException.class);
                assertThat(e.failedRanks()).containsExactly(2, 3);
                assertThat(e).hasMessageContaining("leaf 1 (ranks 2..3) dropped out of job");
            }
            for (AggregationService leaf : cluster.leaves) {
                assertThat(leaf.dataplane().job(cluster.contexts.get(0).jobNumber())).as("the leaves freed the job").isEmpty();
            }
        }
    }

    @Test
    void aDeadSpineFailsEveryWorker() {
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 4, 1, b -> b.operationTimeout(LONG_OPERATION_TIMEOUT))) {
            List<CompletableFuture<Void>> ops = List.of(0, 1, 2).stream()
                    .map(r -> cluster.contexts.get(r).allReduceAsync(new float[100_000], ReduceOp.SUM)).toList();
            cluster.service.close();
            for (CompletableFuture<Void> op : ops) {
                assertThat(failure(op, SwitchUnavailableException.class)).hasMessageContaining("lost its spine");
            }
        }
    }

    @Test
    void aDeadLeafFailsItsWorkersAndTheOtherLeaves() {
        try (LocalCluster cluster = LocalCluster.hierarchy(2, 4, 1, b -> b.operationTimeout(LONG_OPERATION_TIMEOUT))) {
            // Rank 3 never submits, so the others' all-reduce waits while leaf 1 goes.
            List<CompletableFuture<Void>> ops = List.of(0, 1, 2).stream()
                    .map(r -> cluster.contexts.get(r).allReduceAsync(new float[100_000], ReduceOp.SUM)).toList();
            cluster.leaves.get(1).close();
            assertThat(failure(ops.get(2), SwitchUnavailableException.class))
                    .hasMessageContaining("lost the connection to the switch's controller")
                    .hasMessageNotContaining("lost its spine");
            assertThatThrownBy(cluster.contexts.get(3)::barrier).isInstanceOf(SwitchUnavailableException.class);
            for (int r : new int[] {0, 1}) {
                WorkerFailedException e = failure(ops.get(r), WorkerFailedException.class);
                assertThat(e.failedRanks()).containsExactly(2, 3);
                assertThat(e).hasMessageContaining("leaf 1 (ranks 2..3) dropped out of job");
            }
        }
    }

    private static long counter(AggregationService service, String name) {
        Map<String, Long> counters = service.dataplane().counters();
        return counters.get(name);
    }
}
