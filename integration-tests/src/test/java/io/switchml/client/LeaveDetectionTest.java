package io.switchml.client;

import io.switchml.api.RankLeftException;
import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.switchml.client.LivenessTest.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A rank that leaves cleanly (closes its context) while the others wait on an all-reduce it never
 * finished: they fail as soon as the controller tells them, not at the operation timeout, with an
 * error that names the rank and how far it got. All-reduces it did finish are unaffected.
 */
class LeaveDetectionTest {
    /** Far beyond what {@link LivenessTest#failure} waits: a failure it sees comes from the leave. */
    private static final Duration LONG_OPERATION_TIMEOUT = Duration.ofSeconds(60);

    @Test
    void aRankThatLeavesFailsTheOthersWaitingOnAnAllReduceItNeverFinished() {
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.operationTimeout(LONG_OPERATION_TIMEOUT))) {
            String job = cluster.contexts.get(0).config().job();
            // All-reduce #0 on every rank; then ranks 0 and 1 go on to #1 while rank 2 leaves.
            List<CompletableFuture<Void>> first = cluster.contexts.stream()
                    .map(c -> c.allReduceAsync(new float[5_000], ReduceOp.SUM)).toList();
            first.forEach(CompletableFuture::join);
            CompletableFuture<Void> waiting0 = cluster.contexts.get(0).allReduceAsync(new float[5_000], ReduceOp.SUM);
            CompletableFuture<Void> waiting1 = cluster.contexts.get(1).allReduceAsync(new int[3], ReduceOp.SUM);

            cluster.contexts.get(2).close();

            for (CompletableFuture<Void> op : List.of(waiting0, waiting1)) {
                RankLeftException e = failure(op, RankLeftException.class);
                assertThat(e.leftRank()).isEqualTo(2);
                assertThat(e.leftOperations()).isEqualTo(1);
                assertThat(e).hasMessageContaining("rank 2 left job '" + job + "'")
                        .hasMessageContaining("after finishing 1 all-reduce(s)")
                        .hasMessageContaining("waits on all-reduce #1")
                        .hasMessageContaining("the same number of training steps");
            }
            // Later calls fail at once too.
            assertThatThrownBy(() -> cluster.contexts.get(0).allReduce(new float[4], ReduceOp.SUM))
                    .isInstanceOf(SwitchMLException.class).hasMessageContaining("rank 2 left job");
        }
    }

    @Test
    void anAllReduceSubmittedAfterTheLeaveFailsAtOnce() throws Exception {
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.operationTimeout(LONG_OPERATION_TIMEOUT))) {
            cluster.contexts.get(1).close();
            // Submitted before or after the event arrives: either way it fails with the leave.
            RankLeftException e = failure(cluster.contexts.get(0).allReduceAsync(new float[10], ReduceOp.MEAN),
                    RankLeftException.class);
            assertThat(e.leftRank()).isEqualTo(1);
            assertThat(e.leftOperations()).isZero();
            assertThat(e).hasMessageContaining("all-reduce #0");
        }
    }

    @Test
    void ranksThatFinishedTheSameAllReducesLeaveInAnyOrderWithoutError() {
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.operationTimeout(LONG_OPERATION_TIMEOUT))) {
            float[][] data = new float[3][];
            List<CompletableFuture<Void>> ops = new java.util.ArrayList<>();
            for (int r = 0; r < 3; r++) {
                data[r] = new float[]{r, 1};
                ops.add(cluster.contexts.get(r).allReduceAsync(data[r], ReduceOp.SUM));
            }
            // Rank 0 leaves as soon as its own result is in; the others still get theirs.
            ops.get(0).join();
            cluster.contexts.get(0).close();
            for (int r = 1; r < 3; r++) {
                ops.get(r).join();
                assertThat(data[r]).containsExactly(3f, 3f);
            }
            // After the last all-reduce they all finished, nothing is waiting: the next leaves are quiet.
            cluster.contexts.get(1).close();
            cluster.contexts.get(2).close();
        }
    }
}
