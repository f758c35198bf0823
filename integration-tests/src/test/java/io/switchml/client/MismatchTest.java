package io.switchml.client;

import io.switchml.api.MismatchedOperationException;
import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Workers that do not run the same all-reduce all get a clear error at once, never a wrong sum. */
class MismatchTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** Runs {@code call(rank, ctx)} on every worker; returns what each threw (null if nothing). */
    private static List<Throwable> outcomes(int workers, int threads,
                                            BiFunction<Integer, SwitchMLContext, CompletableFuture<Void>> call) {
        try (LocalCluster cluster = new LocalCluster(workers, 1, b -> b.threads(threads).operationTimeout(TIMEOUT))) {
            long start = System.nanoTime();
            List<Throwable> errors = cluster.onEveryWorker((rank, ctx) -> {
                try {
                    call.apply(rank, ctx).get(TIMEOUT.toSeconds() + 10, TimeUnit.SECONDS);
                    return null;
                } catch (Exception e) {
                    return e.getCause() != null ? e.getCause() : e;
                }
            });
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("fails at once, not by timeout")
                    .isLessThan(Duration.ofSeconds(10));
            for (SwitchMLContext ctx : cluster.contexts) {
                assertThatThrownBy(() -> ctx.allReduce(new float[8], ReduceOp.SUM))
                        .hasMessageContaining("can no longer be used");
            }
            return errors;
        }
    }

    private static void assertAllMismatched(List<Throwable> errors) {
        assertThat(errors).allSatisfy(e -> assertThat(e).isInstanceOf(MismatchedOperationException.class)
                .hasMessageContaining("not running the same all-reduce").hasMessageContaining("job number"));
    }

    @Test
    void differentLengths() {
        float[][] out = new float[2][];
        assertAllMismatched(outcomes(2, 1, (rank, ctx) -> {
            float[] x = new float[rank == 0 ? 5000 : 7000];
            java.util.Arrays.fill(x, 1f);
            out[rank] = x;
            return ctx.allReduceAsync(x, ReduceOp.SUM);
        }));
        assertThat(out[0]).as("no value written").containsOnly(1f);
        assertThat(out[1]).containsOnly(1f);
    }

    @Test
    void differentLengthsOverSeveralThreadsAndATinyTensor() {
        assertAllMismatched(outcomes(3, 3, (rank, ctx) ->
                ctx.allReduceAsync(new float[rank == 2 ? 10 : 100_000], ReduceOp.SUM)));
    }

    @Test
    void differentElementTypes() {
        assertAllMismatched(outcomes(2, 1, (rank, ctx) -> rank == 0
                ? ctx.allReduceAsync(new float[4096], ReduceOp.SUM)
                : ctx.allReduceAsync(new int[4096], ReduceOp.SUM)));
    }

    @Test
    void differentOperations() {
        assertAllMismatched(outcomes(2, 1, (rank, ctx) ->
                ctx.allReduceAsync(new int[100], rank == 0 ? ReduceOp.SUM : ReduceOp.MEAN)));
    }

    @Test
    void aSkippedCallIsCaughtAtTheFirstCallThatDiffers() {
        List<Throwable> errors = outcomes(2, 1, (rank, ctx) -> {
            CompletableFuture<Void> skippedByRankOne = rank == 0 ? ctx.allReduceAsync(new float[64], ReduceOp.SUM) : null;
            CompletableFuture<Void> common = ctx.allReduceAsync(new float[128], ReduceOp.SUM);
            if (skippedByRankOne != null) {
                assertThatThrownBy(skippedByRankOne::join).hasCauseInstanceOf(MismatchedOperationException.class);
            }
            return common;
        });
        assertThat(errors.get(1)).isInstanceOf(MismatchedOperationException.class);
        assertThat(errors.get(0)).as("the call after the mismatch").isInstanceOf(SwitchMLException.class);
    }
}
