package io.switchml.client;

import io.switchml.api.AllReduceTimeoutException;
import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchUnavailableException;
import io.switchml.api.WorkerFailedException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * A worker or the switch dies mid-job: the others fail fast (long before the operation timeout)
 * with an error that names the job, the dead rank and what to do; the switch frees the job.
 */
class LivenessTest {
    /** Far beyond what the tests wait: a failure they see comes from the liveness watch. */
    private static final Duration LONG_OPERATION_TIMEOUT = Duration.ofSeconds(60);

    @Test
    void aWorkerThatDiesMakesTheOthersFailAtOnceAndTheSwitchFreesTheJob() throws Exception {
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.operationTimeout(LONG_OPERATION_TIMEOUT))) {
            SwitchMLContext r0 = cluster.contexts.get(0);
            SwitchMLContext r1 = cluster.contexts.get(1);
            String job = r0.config().job();
            int number = r0.jobNumber();
            // Ranks 0 and 1 all-reduce; rank 2 never contributes, so they wait for it.
            CompletableFuture<Void> op0 = r0.allReduceAsync(new float[100_000], ReduceOp.SUM);
            CompletableFuture<Void> queued0 = r0.allReduceAsync(new int[10], ReduceOp.SUM);
            CompletableFuture<Void> op1 = r1.allReduceAsync(new float[100_000], ReduceOp.SUM);
            Thread.sleep(300);
            assertThat(op0).isNotDone();
            assertThat(cluster.service.dataplane().job(number)).isPresent();

            cluster.contexts.get(2).abandon();

            for (CompletableFuture<Void> op : List.of(op0, queued0, op1)) {
                WorkerFailedException e = failure(op, WorkerFailedException.class);
                assertThat(e.failedRanks()).containsExactly(2);
                assertThat(e.jobName()).isEqualTo(job);
                assertThat(e.jobNumber()).isEqualTo(number);
                assertThat(e).hasMessageContaining("job '" + job + "' (job number " + number + ") was aborted because rank 2 died")
                        .hasMessageContaining("ended before the rank left the job")
                        .hasMessageContaining("The switch freed the job's slots")
                        .hasMessageContaining("restart the job: close this context");
            }
            assertThat(cluster.service.dataplane().job(number)).as("the switch freed the job").isEmpty();

            // Later calls fail at once with the same error.
            assertThatThrownBy(() -> r0.allReduce(new float[4], ReduceOp.SUM)).isInstanceOf(WorkerFailedException.class)
                    .hasMessageContaining("rank 2 died");
            assertThatThrownBy(r1::barrier).isInstanceOf(WorkerFailedException.class).hasMessageContaining("rank 2 died");
        }
    }

    @Test
    void aWorkerThatDiesWhileTheOthersWaitInABarrierFailsThemWithTheSameError() {
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.joinTimeout(Duration.ofSeconds(60)))) {
            List<CompletableFuture<Void>> barriers = List.of(0, 1).stream()
                    .map(r -> CompletableFuture.runAsync(cluster.contexts.get(r)::barrier)).toList();
            sleep(300);
            cluster.contexts.get(2).abandon();
            for (CompletableFuture<Void> b : barriers) {
                assertThat(failure(b, WorkerFailedException.class).failedRanks()).containsExactly(2);
            }
        }
    }

    @Test
    void aTimeoutNamesTheRanksTheSwitchIsStillWaitingFor() {
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.operationTimeout(Duration.ofMillis(1500)))) {
            // Rank 2 is alive but never submits.
            List<CompletableFuture<Void>> ops = List.of(0, 1).stream()
                    .map(r -> cluster.contexts.get(r).allReduceAsync(new float[20_000], ReduceOp.SUM)).toList();
            for (CompletableFuture<Void> op : ops) {
                AllReduceTimeoutException e = failure(op, AllReduceTimeoutException.class);
                assertThat(e.missingRanks()).containsExactly(2);
                assertThat(e).hasMessageContaining("timed out after 1500 ms")
                        .hasMessageContaining("Missing ranks: the switch is still waiting for rank(s) [2]");
            }
        }
    }

    @Test
    void theSwitchGoingAwayFailsTheWorkersWithSwitchUnavailable() {
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.operationTimeout(LONG_OPERATION_TIMEOUT))) {
            SwitchMLContext r0 = cluster.contexts.get(0);
            CompletableFuture<Void> op = r0.allReduceAsync(new float[100_000], ReduceOp.SUM); // waits for rank 1
            sleep(300);
            cluster.service.close();
            SwitchUnavailableException e = failure(op, SwitchUnavailableException.class);
            assertThat(e).hasMessageContaining("job '" + r0.config().job() + "' (job number " + r0.jobNumber() + "), rank 0")
                    .hasMessageContaining("lost the connection to the switch's controller at 127.0.0.1:")
                    .hasMessageContaining("once the switch is back, join again");
            assertThatThrownBy(cluster.contexts.get(1)::barrier).isInstanceOf(SwitchUnavailableException.class);
        }
    }

    /** The exception {@code op} fails with, within 10 s. */
    static <E extends Throwable> E failure(CompletableFuture<?> op, Class<E> type) {
        try {
            op.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(type);
            return type.cast(e.getCause());
        } catch (Exception e) {
            throw new AssertionError("the operation did not fail within 10 s", e);
        }
        return fail("expected the operation to fail with " + type.getSimpleName());
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
