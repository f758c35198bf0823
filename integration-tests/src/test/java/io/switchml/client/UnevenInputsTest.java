package io.switchml.client;

import io.switchml.api.UnevenInputs;

import io.switchml.api.ReduceOp;
import io.switchml.api.StepCountMismatchException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Ranks with different numbers of steps: joined ranks shadow with zeros; without joining, every rank fails. */
class UnevenInputsTest {
    private static final int[] STEPS = {2, 5, 3};
    private static final int LENGTH = 3_000;

    @Test
    void joinedRanksContributeZerosUntilEveryRankHasJoinedAndAllEndAlike() {
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.operationTimeout(Duration.ofSeconds(30)))) {
            List<long[]> results = cluster.onEveryWorker((rank, ctx) -> {
                UnevenInputs uneven = new UnevenInputs(ctx);
                long[] sums = new long[LENGTH];
                int[] training = new int[6];
                for (int s = 0; s < STEPS[rank]; s++) {
                    int[] data = new int[LENGTH];
                    for (int i = 0; i < LENGTH; i++) {
                        data[i] = rank * 1000 + s * 10 + i % 7;
                    }
                    training[s] = uneven.step();
                    ctx.allReduce(data, ReduceOp.SUM);
                    accumulate(sums, data);
                }
                long shadowed = uneven.join(n -> {
                    int[] zeros = new int[LENGTH];
                    ctx.allReduce(zeros, ReduceOp.SUM);
                    accumulate(sums, zeros);
                });
                assertThat(STEPS[rank] + shadowed).as("rank %d took part in every step", rank).isEqualTo(5);
                if (rank == 1) {
                    assertThat(training).startsWith(3, 3, 2, 1, 1); // the longest rank sees the others join
                }
                return sums;
            });
            long[] expected = new long[LENGTH];
            for (int r = 0; r < 3; r++) {
                for (int s = 0; s < STEPS[r]; s++) {
                    for (int i = 0; i < LENGTH; i++) {
                        expected[i] += r * 1000 + s * 10 + i % 7;
                    }
                }
            }
            for (long[] sums : results) {
                assertThat(sums).isEqualTo(expected);
            }
        }
    }

    @Test
    void withoutJoiningAStepCountMismatchFailsEveryRank() {
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.operationTimeout(Duration.ofSeconds(30)))) {
            List<Throwable> failures = cluster.onEveryWorker((rank, ctx) -> {
                UnevenInputs uneven = new UnevenInputs(ctx);
                try {
                    for (int s = 0; s < 2 + rank; s++) {
                        uneven.step();
                        ctx.allReduce(new float[100], ReduceOp.SUM);
                    }
                    uneven.finish();
                    return null;
                } catch (StepCountMismatchException e) {
                    return e;
                }
            });
            assertThat(failures.get(0)).hasMessageContaining("rank 0 ended after 2 step(s) but 1 rank(s) still have data for step 3")
                    .hasMessageContaining("every rank must run the same number of steps");
            assertThat(failures.get(1)).hasMessageContaining("rank 1 has data for step 3 but 1 rank(s) ended after 2 step(s)");
        }
    }

    @Test
    void ranksThatEndTogetherFinishQuietlyAndCanStartAgain() {
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.operationTimeout(Duration.ofSeconds(30)))) {
            List<Long> steps = cluster.onEveryWorker((rank, ctx) -> {
                UnevenInputs uneven = new UnevenInputs(ctx);
                for (int epoch = 0; epoch < 2; epoch++) {
                    for (int s = 0; s < 3; s++) {
                        assertThat(uneven.step()).isEqualTo(2);
                        ctx.allReduce(new float[10], ReduceOp.SUM);
                    }
                    uneven.finish();
                }
                return uneven.steps();
            });
            assertThat(steps).containsExactly(6L, 6L);
        }
    }

    private static void accumulate(long[] sums, int[] data) {
        for (int i = 0; i < sums.length; i++) {
            sums[i] += data[i];
        }
    }
}
