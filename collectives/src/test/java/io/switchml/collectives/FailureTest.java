package io.switchml.collectives;

import io.switchml.api.AllReduce;
import io.switchml.api.AllReduceTimeoutException;
import io.switchml.api.MismatchedOperationException;
import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;
import io.switchml.collectives.LocalJob.Layout;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Missing, silent, dying and disagreeing peers: every surviving worker fails within its timeout (or
 * at once, when a connection closes) with an error that names the peer, and nothing hangs.
 */
class FailureTest {
    private static final Layout RING = Layout.ring(CollectiveConfig.DEFAULT_SEGMENT_BYTES);
    private static final Layout PS_DEDICATED = Layout.ps(2, false, 64 << 10);
    private static final Layout PS_IN_WORKERS = Layout.ps(0, true, 64 << 10);
    private static final int LARGE = 1 << 20;

    private static UnaryOperator<CollectiveConfig.Builder> timeouts(Duration connect, Duration operation) {
        return b -> b.connectTimeout(connect).operationTimeout(operation);
    }

    @Test
    void ringPeerThatNeverStartsIsNamedByTheTimeout() {
        assertThatThrownBy(() -> new LocalJob(RING, 3, timeouts(Duration.ofMillis(1500), Duration.ofSeconds(5)), Set.of(1),
                List.of()).close())
                .isInstanceOf(CollectiveTimeoutException.class)
                .hasMessageContaining("timed out after 1500 ms setting up connections")
                .hasMessageContaining("rank 1")
                .satisfies(e -> assertThat(((AllReduceTimeoutException) e).missingRanks()).contains(1));
    }

    @Test
    void everyWaitingRankNamesTheMissingOne() {
        // Rank 1 is absent: rank 2 cannot dial it (refused), rank 0 waits for it to dial in.
        List<Listener> listeners = LocalJob.bindAll(3);
        List<InetSocketAddress> endpoints = LocalJob.addresses(listeners);
        listeners.get(1).close();
        List<CompletableFuture<AllReduce>> opening = new ArrayList<>();
        for (int r : new int[]{0, 2}) {
            CollectiveConfig config = CollectiveConfig.builder().algorithm("ring").rank(r).endpoints(endpoints)
                    .connectTimeout(Duration.ofMillis(1200)).build();
            Listener listener = listeners.get(r);
            opening.add(CompletableFuture.supplyAsync(() -> Collectives.open(config, listener, null)));
        }
        Throwable rank0 = failure(opening.get(0));
        Throwable rank2 = failure(opening.get(1));
        assertThat(rank0).isInstanceOf(CollectiveTimeoutException.class)
                .hasMessageContaining("rank 1 never connected to this worker's endpoint");
        assertThat(rank2).isInstanceOf(CollectiveTimeoutException.class)
                .hasMessageContaining("could not connect to rank 1").hasMessageContaining("Connection refused");
        assertThat(((AllReduceTimeoutException) rank0).missingRanks()).containsExactly(1);
        assertThat(((AllReduceTimeoutException) rank2).missingRanks()).containsExactly(1);
    }

    @Test
    void aPeerThatAcceptsButNeverAnswersIsNamed() {
        List<Listener> listeners = LocalJob.bindAll(2);
        try {
            CollectiveConfig config = CollectiveConfig.builder().algorithm("ring").rank(1)
                    .endpoints(LocalJob.addresses(listeners)).connectTimeout(Duration.ofMillis(800)).build();
            // Rank 0's port is bound, so the kernel accepts the connection, but nobody answers.
            assertThatThrownBy(() -> Collectives.open(config, listeners.get(1), null))
                    .isInstanceOf(CollectiveTimeoutException.class)
                    .hasMessageContaining("could not connect to rank 0")
                    .hasMessageContaining("never answered the handshake");
        } finally {
            listeners.get(0).close();
        }
    }

    @Test
    void parameterServerThatNeverStartsIsNamed() {
        List<Listener> servers = LocalJob.bindAll(1);
        InetSocketAddress server = servers.get(0).address();
        servers.get(0).close();
        assertThatThrownBy(() -> new LocalJob(PS_DEDICATED, 2, timeouts(Duration.ofMillis(1000), Duration.ofSeconds(5)),
                Set.of(), List.of(server, new InetSocketAddress("127.0.0.1", 9))).close())
                .isInstanceOf(CollectiveTimeoutException.class)
                .hasMessageContaining("could not connect to server 0");
    }

    @Test
    void ringRankThatStopsSubmittingTimesOutItsNeighbours() {
        try (LocalJob job = new LocalJob(RING, 3, timeouts(Duration.ofSeconds(20), Duration.ofMillis(1000)), Set.of(),
                List.of())) {
            List<Throwable> errors = failures(job, Set.of(2), LARGE);
            // Rank 0 receives from rank 2 and names it; rank 1 waits for rank 0, or sees it give up.
            assertThat(errors.get(0)).isInstanceOf(CollectiveTimeoutException.class)
                    .hasMessageContaining("timed out after 1000 ms waiting for rank 2");
            assertThat(((AllReduceTimeoutException) errors.get(0)).missingRanks()).contains(2);
            assertThat(errors.get(1)).isInstanceOf(SwitchMLException.class).hasMessageContaining("rank 0");
            // Once failed, an instance refuses further work at once.
            assertThatThrownBy(() -> job.workers.get(0).allReduce(new float[10], ReduceOp.SUM))
                    .hasMessageContaining("an earlier operation failed");
        }
    }

    @Test
    void ringPeerThatDiesMidOperationFailsTheOthersAtOnce() {
        try (LocalJob job = new LocalJob(RING, 4, timeouts(Duration.ofSeconds(20), Duration.ofSeconds(30)), Set.of(),
                List.of())) {
            // Ranks 0, 1 and 3 are in a large all-reduce that cannot finish without rank 2; then rank 2 dies.
            List<CompletableFuture<Void>> running = new ArrayList<>();
            for (int r : new int[]{0, 1, 3}) {
                running.add(job.workers.get(r).allReduceAsync(new float[LARGE], ReduceOp.SUM));
            }
            sleep(300);
            job.workers.get(2).close();
            // Its neighbours see its connections close; each failing rank closes its own, so the rest follow.
            for (CompletableFuture<Void> f : running) {
                assertThat(failure(f)).isInstanceOf(PeerFailedException.class).hasMessageContaining("closed the connection");
            }
        }
    }

    @Test
    void ringRankClosedDuringItsOwnOperationFailsIt() {
        try (LocalJob job = new LocalJob(RING, 3, timeouts(Duration.ofSeconds(20), Duration.ofSeconds(30)), Set.of(),
                List.of())) {
            CompletableFuture<Void> running = job.workers.get(1).allReduceAsync(new float[LARGE], ReduceOp.SUM);
            sleep(200);
            job.workers.get(1).close();
            assertThat(failure(running)).hasMessageContaining("closed while the operation was running");
        }
    }

    @Test
    void parameterServerNamesTheRankItNeverHeardFrom() {
        for (Layout layout : List.of(PS_DEDICATED, PS_IN_WORKERS)) {
            try (LocalJob job = new LocalJob(layout, 3, timeouts(Duration.ofSeconds(20), Duration.ofMillis(1000)), Set.of(),
                    List.of())) {
                List<Throwable> errors = failures(job, Set.of(2), LARGE);
                for (int r = 0; r < 2; r++) {
                    assertThat(errors.get(r)).as("%s rank %d", layout, r).isInstanceOf(CollectiveTimeoutException.class)
                            .hasMessageContaining("gave up").hasMessageContaining("not heard from rank 2");
                    assertThat(((AllReduceTimeoutException) errors.get(r)).missingRanks()).containsExactly(2);
                }
            }
        }
    }

    @Test
    void dedicatedServersServeANewJobAfterAFailedOne() {
        LocalJob first = new LocalJob(PS_DEDICATED, 3, timeouts(Duration.ofSeconds(20), Duration.ofMillis(800)), Set.of(),
                List.of());
        List<InetSocketAddress> servers = first.configs.get(0).servers();
        try {
            failures(first, Set.of(1), 1000);
            for (AllReduce w : first.workers) {
                w.close();
            }
            try (LocalJob second = new LocalJob(PS_DEDICATED, 3, b -> b, Set.of(), servers)) {
                float[][] inputs = TestTensors.floats(3, 10_001, 5);
                ExactnessTest.checkFloats(second, Algorithm.PARAMETER_SERVER, inputs, ReduceOp.SUM,
                        TestTensors.Passing.ARRAY_IN_PLACE);
                ExactnessTest.checkFloats(second, Algorithm.PARAMETER_SERVER, inputs, ReduceOp.MEAN,
                        TestTensors.Passing.ARRAY_IN_PLACE);
            }
            assertThat(first.dedicatedServers.get(0).completedOperations()).isEqualTo(2);
        } finally {
            first.close();
        }
    }

    @Test
    void parameterServerReportsAWorkerThatDiesMidOperation() {
        try (LocalJob job = new LocalJob(PS_DEDICATED, 4, timeouts(Duration.ofSeconds(20), Duration.ofSeconds(30)), Set.of(),
                List.of())) {
            List<CompletableFuture<Void>> running = new ArrayList<>();
            for (int r : new int[]{0, 1, 3}) {
                running.add(job.workers.get(r).allReduceAsync(new float[LARGE], ReduceOp.SUM));
            }
            sleep(300);
            job.workers.get(2).close();
            for (CompletableFuture<Void> f : running) {
                Throwable e = failure(f);
                assertThat(e).isInstanceOf(PeerFailedException.class).hasMessageContaining("rank 2");
                assertThat(((PeerFailedException) e).failedRanks()).containsExactly(2);
            }
        }
    }

    @Test
    void workersFailAtOnceWhenAServerDies() {
        try (LocalJob job = new LocalJob(PS_DEDICATED, 3, timeouts(Duration.ofSeconds(20), Duration.ofSeconds(30)), Set.of(),
                List.of())) {
            List<CompletableFuture<Void>> running = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                running.add(job.workers.get(r).allReduceAsync(new float[LARGE], ReduceOp.SUM));
            }
            sleep(300);
            job.dedicatedServers.get(1).close();
            for (CompletableFuture<Void> f : running) {
                assertThat(failure(f)).isInstanceOf(PeerFailedException.class)
                        .hasMessageContaining("server 1").hasMessageContaining("closed the connection");
            }
        }
    }

    @Test
    void workersThatSubmitDifferentOperationsAllFail() {
        for (Layout layout : List.of(RING, PS_DEDICATED)) {
            try (LocalJob job = new LocalJob(layout, 3, timeouts(Duration.ofSeconds(20), Duration.ofSeconds(30)), Set.of(),
                    List.of())) {
                List<Throwable> errors = job.onEveryRank((rank, allReduce) -> failure(
                        allReduce.allReduceAsync(new float[rank == 1 ? 1001 : 1000], ReduceOp.SUM)));
                assertThat(errors).as(layout.name()).allSatisfy(e -> assertThat(e).isInstanceOf(SwitchMLException.class));
                assertThat(errors).as(layout.name()).anySatisfy(e -> assertThat(e)
                        .isInstanceOf(MismatchedOperationException.class)
                        .hasMessageContaining("1001").hasMessageContaining("1000"));
                if (layout == PS_DEDICATED) {
                    assertThat(errors).allSatisfy(e -> assertThat(e).isInstanceOf(MismatchedOperationException.class));
                }
            }
        }
    }

    @Test
    void closingAnInstanceFailsItsQueuedOperations() {
        try (LocalJob job = new LocalJob(RING, 2, timeouts(Duration.ofSeconds(20), Duration.ofSeconds(30)), Set.of(),
                List.of())) {
            AllReduce rank0 = job.workers.get(0);
            CompletableFuture<Void> running = rank0.allReduceAsync(new float[LARGE], ReduceOp.SUM);
            CompletableFuture<Void> queued = rank0.allReduceAsync(new int[10], ReduceOp.SUM);
            sleep(100);
            rank0.close();
            assertThat(failure(running)).hasMessageContaining("closed");
            assertThat(failure(queued)).hasMessageContaining("closed");
            assertThatThrownBy(() -> rank0.allReduce(new float[1], ReduceOp.SUM)).hasMessageContaining("closed");
            assertThatThrownBy(rank0::barrier).hasMessageContaining("closed");
        }
    }

    /** Every rank runs one all-reduce except the silent ones; returns the errors of the others, by rank. */
    private static List<Throwable> failures(LocalJob job, Set<Integer> silent, int length) {
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (int r = 0; r < job.size(); r++) {
            running.add(silent.contains(r) ? null : job.workers.get(r).allReduceAsync(new float[length], ReduceOp.SUM));
        }
        List<Throwable> errors = new ArrayList<>();
        for (CompletableFuture<Void> f : running) {
            errors.add(f == null ? null : failure(f));
        }
        return errors;
    }

    /** The exception the future fails with; fails the test if it completes normally or hangs. */
    private static Throwable failure(CompletableFuture<?> future) {
        try {
            future.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            throw new AssertionError("the operation neither failed nor completed in time", e);
        }
        throw new AssertionError("the operation succeeded, but it should have failed");
    }


    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
