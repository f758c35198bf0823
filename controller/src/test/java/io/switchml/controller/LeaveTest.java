package io.switchml.controller;

import io.grpc.Status;
import io.grpc.Status.Code;
import io.switchml.controller.proto.BarrierResponse;
import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.StatusRequest;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

class LeaveTest extends ControllerTestSupport {

    List<JobStatus> jobs() {
        return stub().status(StatusRequest.getDefaultInstance()).getJobsList();
    }

    @Test
    void theJobIsRemovedWhenEveryRankHasLeftAndItsNumberIsReused() {
        int number = formJob("first", 3, 40_000);
        stub().leave(leave(number, 1));
        // Still installed while ranks remain; inspection shows who left.
        assertThat(service.dataplane().job(number)).isPresent();
        assertThat(jobs()).singleElement().satisfies(j -> assertThat(j.getWorkersList())
                .containsExactly("rank 0 127.0.0.1 ports [40000]", "rank 1 127.0.0.1 ports [40010] (left)",
                        "rank 2 127.0.0.1 ports [40020]"));
        stub().leave(leave(number, 0));
        stub().leave(leave(number, 2));

        assertThat(service.dataplane().job(number)).isEmpty();
        assertThat(jobs()).isEmpty();
        assertFails(() -> stub().barrier(barrier(number, 0, 1, 1_000)), Code.NOT_FOUND, "no job number " + number);

        // The number and the workers' endpoints are free again: a new job (same ports) gets the number.
        int next = formJob("second", 2, 40_000);
        assertThat(next).isEqualTo(number);
        assertThat(service.dataplane().job(next).orElseThrow().name()).isEqualTo("second");
        // And the old name can be used again too.
        int again = formJob("first", 3, 46_000);
        assertThat(again).isNotEqualTo(next);
    }

    @Test
    void theLowestFreeNumberIsReusedWhileOtherJobsRun() {
        int a = formJob("a", 1, 40_000);
        int b = formJob("b", 1, 41_000);
        assertThat(b).isNotEqualTo(a);
        stub().leave(leave(a, 0));
        assertThat(service.dataplane().job(a)).isEmpty();
        assertThat(service.dataplane().job(b)).isPresent();
        assertThat(formJob("c", 1, 42_000)).isEqualTo(a);
    }

    @Test
    void aWaitingBarrierIsAbortedWhenARankLeaves() throws Exception {
        int number = formJob("job", 3, 40_000);
        CompletableFuture<BarrierResponse> r0 = async(() -> stub().barrier(barrier(number, 0, 1, LONG_TIMEOUT_MS)));
        CompletableFuture<BarrierResponse> r1 = async(() -> stub().barrier(barrier(number, 1, 1, LONG_TIMEOUT_MS)));
        assertStillWaiting(CompletableFuture.anyOf(r0, r1), 300);
        stub().leave(leave(number, 2));
        for (CompletableFuture<BarrierResponse> call : List.of(r0, r1)) {
            Status status = failure(call);
            // ABORTED by the leave, not DEADLINE_EXCEEDED after the barriers' long timeout.
            assertStatus(status, Code.ABORTED, "rank 2 left job 'job'");
        }
    }

    @Test
    void aBarrierAfterARankLeftFailsAtOnceInsteadOfWaitingForTheTimeout() {
        int number = formJob("job", 2, 40_000);
        stub().leave(leave(number, 1));
        // ABORTED at once, not DEADLINE_EXCEEDED after the long timeout.
        assertFails(() -> stub().barrier(barrier(number, 0, 1, LONG_TIMEOUT_MS)), Code.ABORTED,
                "rank 1 left job 'job' earlier");
        assertFails(() -> stub().broadcast(broadcast(number, 0, 0, 2, "x", LONG_TIMEOUT_MS)), Code.ABORTED,
                "rank 1 left job 'job' earlier");
        stub().leave(leave(number, 0));
        assertThat(service.dataplane().job(number)).isEmpty();
    }

    @Test
    void callsByARankThatLeftAreFailedPrecondition() {
        int number = formJob("job", 3, 40_000);
        stub().leave(leave(number, 1));
        String named = "rank 1 has already left job 'job'";
        assertFails(() -> stub().leave(leave(number, 1)), Code.FAILED_PRECONDITION, named);
        assertFails(() -> stub().barrier(barrier(number, 1, 1, 1_000)), Code.FAILED_PRECONDITION, named);
        assertFails(() -> stub().broadcast(broadcast(number, 1, 0, 1, "x", 1_000)), Code.FAILED_PRECONDITION, named);
        // Leaving twice does not count twice: the job stays until ranks 0 and 2 leave as well.
        stub().leave(leave(number, 0));
        assertThat(service.dataplane().job(number)).isPresent();
        stub().leave(leave(number, 2));
        assertThat(service.dataplane().job(number)).isEmpty();
    }

    @Test
    void leaveWithARankOutsideTheJobIsInvalid() {
        int number = formJob("job", 1, 40_000);
        assertFails(() -> stub().leave(leave(number, 1)), Code.INVALID_ARGUMENT, "rank 1 outside 0..0");
        // A uint32 rank above 2^31 must not count as a rank that left (it used to remove the job).
        assertFails(() -> stub().leave(leave(number, -1)), Code.INVALID_ARGUMENT, "rank 4294967295 outside 0..0");
        assertThat(service.dataplane().job(number)).isPresent();
    }
}
