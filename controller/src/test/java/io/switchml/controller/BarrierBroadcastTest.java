package io.switchml.controller;

import io.grpc.Status.Code;
import io.switchml.controller.proto.BarrierResponse;
import io.switchml.controller.proto.BroadcastResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

class BarrierBroadcastTest extends ControllerTestSupport {
    int job;

    @BeforeEach
    void formJob() {
        job = formJob("job", 3, 40_000);
    }

    CompletableFuture<BarrierResponse> barrierAsync(int rank, long sequence, int timeoutMs) {
        return async(() -> stub().barrier(barrier(job, rank, sequence, timeoutMs)));
    }

    CompletableFuture<BroadcastResponse> broadcastAsync(int rank, int root, long sequence, String value, int timeoutMs) {
        return async(() -> stub().broadcast(broadcast(job, rank, root, sequence, value, timeoutMs)));
    }

    @Test
    void barrierReleasesEveryRankTogether() throws Exception {
        for (long sequence = 0; sequence < 3; sequence++) {
            CompletableFuture<BarrierResponse> r0 = barrierAsync(0, sequence, LONG_TIMEOUT_MS);
            CompletableFuture<BarrierResponse> r1 = barrierAsync(1, sequence, LONG_TIMEOUT_MS);
            assertStillWaiting(CompletableFuture.anyOf(r0, r1), 200);
            assertThat(stub().barrier(barrier(job, 2, sequence, LONG_TIMEOUT_MS))).isNotNull();
            get(r0);
            get(r1);
        }
    }

    @Test
    void barrierWithAMissingRankTimesOutNamingIt() {
        CompletableFuture<BarrierResponse> r0 = barrierAsync(0, 7, 300);
        CompletableFuture<BarrierResponse> r1 = barrierAsync(1, 7, 300);
        for (int rank = 0; rank < 2; rank++) {
            String description = assertStatus(failure(rank == 0 ? r0 : r1), Code.DEADLINE_EXCEEDED,
                    "job 'job': rank " + rank + " waited in barrier (call #7)");
            assertThat(missingRanks(description)).contains(2).doesNotContain(rank);
        }

        // The job is still usable: the next barrier with every rank completes.
        List<CompletableFuture<BarrierResponse>> all = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            all.add(barrierAsync(rank, 8, LONG_TIMEOUT_MS));
        }
        all.forEach(ControllerTestSupport::get);
    }

    @Test
    void broadcastGivesEveryRankTheRootsValue() {
        List<CompletableFuture<BroadcastResponse>> calls = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            calls.add(broadcastAsync(rank, 1, 4, "value of rank " + rank, LONG_TIMEOUT_MS));
        }
        for (CompletableFuture<BroadcastResponse> call : calls) {
            assertThat(get(call).getValue().toStringUtf8()).isEqualTo("value of rank 1");
        }
    }

    @Test
    void broadcastFromARootOutsideTheJobIsInvalid() {
        assertFails(() -> stub().broadcast(broadcast(job, 0, 3, 1, "x", 1_000)), Code.INVALID_ARGUMENT,
                "root 3 outside 0..2");
    }

    @Test
    void broadcastFromARootAbove2To31IsInvalidNotABarrier() {
        // root is a uint32: 0xFFFFFFFF must not be read as -1, the controller's marker for a barrier.
        assertFails(() -> stub().broadcast(broadcast(job, 0, -1, 1, "x", 1_000)), Code.INVALID_ARGUMENT,
                "root 4294967295 outside 0..2");
    }

    @Test
    void barrierAndBroadcastWithTheSameSequenceAreInvalid() {
        CompletableFuture<BarrierResponse> barrier = barrierAsync(0, 5, LONG_TIMEOUT_MS);
        CompletableFuture<BroadcastResponse> broadcast = broadcastAsync(1, 0, 5, "x", LONG_TIMEOUT_MS);
        int refused = firstToFinish(barrier, broadcast);
        if (refused == 1) {
            assertStatus(failure(broadcast), Code.INVALID_ARGUMENT,
                    "rank 1 calls a broadcast from root 0 as call #5 of job " + job + ", but other ranks called a barrier",
                    "every rank must make the same sequence of barrier and broadcast calls");
            // The waiting barrier is intact: ranks 1 and 2 complete it.
            List<CompletableFuture<BarrierResponse>> rest = List.of(barrierAsync(1, 5, LONG_TIMEOUT_MS),
                    barrierAsync(2, 5, LONG_TIMEOUT_MS));
            rest.forEach(ControllerTestSupport::get);
            get(barrier);
        } else {
            assertStatus(failure(barrier), Code.INVALID_ARGUMENT,
                    "rank 0 calls a barrier as call #5 of job " + job + ", but other ranks called a broadcast from root 0",
                    "every rank must make the same sequence of barrier and broadcast calls");
            List<CompletableFuture<BroadcastResponse>> rest = List.of(broadcastAsync(0, 0, 5, "root", LONG_TIMEOUT_MS),
                    broadcastAsync(2, 0, 5, "y", LONG_TIMEOUT_MS));
            for (CompletableFuture<BroadcastResponse> call : rest) {
                assertThat(get(call).getValue().toStringUtf8()).isEqualTo("root");
            }
            assertThat(get(broadcast).getValue().toStringUtf8()).isEqualTo("root");
        }
    }

    @Test
    void broadcastsFromDifferentRootsWithTheSameSequenceAreInvalid() {
        CompletableFuture<BroadcastResponse> a = broadcastAsync(0, 0, 9, "a", LONG_TIMEOUT_MS);
        CompletableFuture<BroadcastResponse> b = broadcastAsync(1, 1, 9, "b", LONG_TIMEOUT_MS);
        int refused = firstToFinish(a, b);
        assertStatus(failure(refused == 0 ? a : b), Code.INVALID_ARGUMENT,
                "rank " + refused + " calls a broadcast from root " + refused + " as call #9",
                "other ranks called a broadcast from root " + (1 - refused));
        stub().leave(leave(job, 2)); // aborts the waiting one
        assertStatus(failure(refused == 0 ? b : a), Code.ABORTED, "rank 2 left job 'job'");
    }

    @Test
    void aRankWaitingTwiceInTheSameCallIsAlreadyExists() {
        CompletableFuture<BarrierResponse> a = barrierAsync(0, 3, LONG_TIMEOUT_MS);
        CompletableFuture<BarrierResponse> b = barrierAsync(0, 3, LONG_TIMEOUT_MS);
        int refused = firstToFinish(a, b);
        assertStatus(failure(refused == 0 ? a : b), Code.ALREADY_EXISTS, "rank 0 is already waiting in call #3 of job " + job);
        List<CompletableFuture<BarrierResponse>> rest = List.of(barrierAsync(1, 3, LONG_TIMEOUT_MS),
                barrierAsync(2, 3, LONG_TIMEOUT_MS));
        rest.forEach(ControllerTestSupport::get);
        get(refused == 0 ? b : a);
    }

    @Test
    void invalidBarrierArguments() {
        assertFails(() -> stub().barrier(barrier(job, 3, 1, 1_000)), Code.INVALID_ARGUMENT, "rank 3 outside 0..2");
        assertFails(() -> stub().barrier(barrier(job, -1, 1, 1_000)), Code.INVALID_ARGUMENT,
                "rank 4294967295 outside 0..2");
        assertFails(() -> stub().barrier(barrier(job, 0, 1, 0)), Code.INVALID_ARGUMENT, "timeout_ms 0 outside 1..");
        assertFails(() -> stub().barrier(barrier(job, 0, 1, -1)), Code.INVALID_ARGUMENT,
                "timeout_ms 4294967295 outside 1..");
    }

    @Test
    void callsOnAnUnknownJobNumberAreNotFound() {
        int unknown = job + 1;
        String named = "no job number " + unknown + " is running";
        assertFails(() -> stub().barrier(barrier(unknown, 0, 1, 1_000)), Code.NOT_FOUND, named);
        assertFails(() -> stub().broadcast(broadcast(unknown, 0, 0, 1, "x", 1_000)), Code.NOT_FOUND, named);
        assertFails(() -> stub().leave(leave(unknown, 0)), Code.NOT_FOUND, named);
        // Beyond the 8-bit job numbers as well.
        assertFails(() -> stub().barrier(barrier(300, 0, 1, 1_000)), Code.NOT_FOUND, "no job number 300 is running");
        assertFails(() -> stub().leave(leave(-1, 0)), Code.NOT_FOUND, "no job number 4294967295 is running");
    }
}
