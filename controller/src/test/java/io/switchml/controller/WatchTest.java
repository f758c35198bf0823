package io.switchml.controller;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.Status.Code;
import io.grpc.stub.StreamObserver;
import io.switchml.controller.proto.BarrierResponse;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.DiagnoseRequest;
import io.switchml.controller.proto.DiagnoseResponse;
import io.switchml.controller.proto.JobEvent;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.LeaveRequest;
import io.switchml.controller.proto.StatusRequest;
import io.switchml.controller.proto.WatchRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Liveness: a rank whose watch ends before it left is dead, and its job is aborted at once. */
class WatchTest extends ControllerTestSupport {
    private static final Object COMPLETED = "completed";

    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void closeChannels() {
        channels.forEach(ManagedChannel::shutdownNow);
    }

    /** A worker's own connection to the controller, which the test can cut as if the process died. */
    ManagedChannel connection() {
        ManagedChannel c = ManagedChannelBuilder.forAddress(LOOPBACK, service.controllerPort()).usePlaintext().build();
        channels.add(c);
        return c;
    }

    /** An open watch: its events, then COMPLETED or the error it ended with. */
    static final class Watch {
        final BlockingQueue<Object> received = new LinkedBlockingQueue<>();

        Object next(long millis) throws InterruptedException {
            return received.poll(millis, TimeUnit.MILLISECONDS);
        }

        JobEvent nextEvent() throws InterruptedException {
            Object o = next(5_000);
            assertThat(o).as("next event").isInstanceOf(JobEvent.class);
            return (JobEvent) o;
        }
    }

    Watch watch(ManagedChannel on, int jobNumber, long jobId, int rank) throws InterruptedException {
        Watch w = new Watch();
        ControllerGrpc.newStub(on).watch(WatchRequest.newBuilder().setJobNumber(jobNumber).setJobId(jobId).setRank(rank)
                .build(), observerOf(w));
        JobEvent first = w.nextEvent();
        assertThat(first.getKind()).isEqualTo(JobEvent.Kind.WATCHING);
        assertThat(first.getJobNumber()).isEqualTo(jobNumber);
        return w;
    }

    /** Forms a job whose ranks promise watches; returns the join answers in rank order. */
    List<JoinResponse> formWatchedJob(String name, int workers, int basePort, int timeoutMs) {
        List<JoinRequest> requests = new ArrayList<>();
        for (int r = 0; r < workers; r++) {
            requests.add(joinRequest(name, r, params(workers), basePort).setWatch(true).setTimeoutMs(timeoutMs).build());
        }
        return joinAll(requests);
    }

    DiagnoseResponse diagnose(int number, long id) {
        return stub().diagnose(DiagnoseRequest.newBuilder().setJobNumber(number).setJobId(id).build());
    }

    @Test
    void aWatchThatEndsWithoutLeaveAbortsTheJobAndTellsTheOtherRanks() throws Exception {
        JoinResponse joined = formWatchedJob("train", 3, 40_000, LONG_TIMEOUT_MS).get(0);
        int number = joined.getJobNumber();
        long id = joined.getJobId();
        assertThat(id).isNotZero();
        Watch w0 = watch(channel, number, id, 0);
        ManagedChannel dying = connection();
        Watch w1 = watch(dying, number, id, 1);
        Watch w2 = watch(channel, number, id, 2);
        CompletableFuture<BarrierResponse> barrier = async(() -> stub().barrier(barrier(number, 0, 1, LONG_TIMEOUT_MS)));
        assertStillWaiting(barrier, 200);

        dying.shutdownNow(); // as when the process dies: the stream is reset without a Leave

        for (Watch w : List.of(w0, w2)) {
            JobEvent event = w.nextEvent();
            assertThat(event.getKind()).isEqualTo(JobEvent.Kind.RANKS_FAILED);
            assertThat(event.getFailedRanksList()).containsExactly(1);
            assertThat(event.getJobName()).isEqualTo("train");
            assertThat(event.getJobNumber()).isEqualTo(number);
            assertThat(event.getReason()).contains("rank 1").contains("ended before the rank left");
            assertThat(w.next(100)).as("the stream stays open until the rank leaves").isNull();
        }
        assertStatus(failure(barrier), Code.ABORTED, "job 'train' (job number " + number + ") was aborted because rank 1 died",
                "the switch freed the job's slots"); // ABORTED, not the barrier's own (long) timeout: told at once

        // The switch freed the job; the controller lists it no more, but still knows why it ended.
        assertThat(service.dataplane().job(number)).isEmpty();
        assertThat(stub().status(StatusRequest.getDefaultInstance()).getJobsList()).isEmpty();
        DiagnoseResponse d = diagnose(number, id);
        assertThat(d.getKnown()).isTrue();
        assertThat(d.getInstalled()).isFalse();
        assertThat(d.getFailedRanksList()).containsExactly(1);
        assertThat(d.getAbortedReason()).contains("rank 1");
        assertFails(() -> stub().barrier(barrier(number, 2, 2, 1_000)), Code.ABORTED, "was aborted because rank 1 died");

        // A late watch learns it at once; the name is free for the restarted job at once.
        ManagedChannel late = connection();
        Watch again = new Watch();
        ControllerGrpc.newStub(late).watch(WatchRequest.newBuilder().setJobNumber(number).setJobId(id).setRank(2).build(),
                observerOf(again));
        assertThat(again.nextEvent().getFailedRanksList()).containsExactly(1);
        assertThat(again.next(5_000)).isEqualTo(COMPLETED);
        int restarted = formJob("train", 3, 43_000);
        assertThat(restarted).as("the aborted job's number is kept while its survivors watch").isNotEqualTo(number);

        // The survivors leave: their watches end normally, and the aborted job is forgotten.
        stub().leave(LeaveRequest.newBuilder().setJobNumber(number).setJobId(id).setRank(0).build());
        assertThat(w0.next(5_000)).isEqualTo(COMPLETED);
        assertThat(diagnose(number, id).getKnown()).isTrue();
        stub().leave(LeaveRequest.newBuilder().setJobNumber(number).setJobId(id).setRank(2).build());
        assertThat(w2.next(5_000)).isEqualTo(COMPLETED);
        assertThat(diagnose(number, id).getKnown()).isFalse();
        assertThat(service.dataplane().job(restarted)).isPresent();
    }

    @Test
    void aLeaveEndsTheRanksWatchAndTellsTheOthersAfterHowManyAllReduces() throws Exception {
        JoinResponse joined = formWatchedJob("job", 2, 40_000, LONG_TIMEOUT_MS).get(0);
        int number = joined.getJobNumber();
        Watch w0 = watch(connection(), number, joined.getJobId(), 0);
        Watch w1 = watch(connection(), number, joined.getJobId(), 1);

        stub().leave(LeaveRequest.newBuilder().setJobNumber(number).setJobId(joined.getJobId()).setRank(0)
                .setOperations(17).build());
        assertThat(w0.next(5_000)).isEqualTo(COMPLETED);
        JobEvent left = w1.nextEvent();
        assertThat(left.getKind()).isEqualTo(JobEvent.Kind.RANK_LEFT);
        assertThat(left.getLeftRank()).isZero();
        assertThat(left.getLeftOperations()).isEqualTo(17);
        assertThat(service.dataplane().job(number)).as("the others' job goes on").isPresent();

        stub().leave(leave(number, 1));
        assertThat(w1.next(5_000)).isEqualTo(COMPLETED);
        assertThat(service.dataplane().job(number)).isEmpty();
        channels.forEach(ManagedChannel::shutdownNow); // closing connections after leaving changes nothing
        assertThat(diagnose(number, 0).getKnown()).isFalse();
    }

    @Test
    void aRankThatPromisedAWatchAndOpensNoneIsDeclaredDead() throws Exception {
        JoinResponse joined = formWatchedJob("quiet", 2, 40_000, 1_000).get(0);
        int number = joined.getJobNumber();
        Watch w0 = watch(channel, number, joined.getJobId(), 0);
        JobEvent event = w0.nextEvent();
        assertThat(event.getKind()).isEqualTo(JobEvent.Kind.RANKS_FAILED);
        assertThat(event.getFailedRanksList()).containsExactly(1);
        assertThat(event.getReason()).contains("rank 1 did not open its watch within 1000 ms");
        assertThat(service.dataplane().job(number)).isEmpty();
    }

    @Test
    void ranksWithoutAPromiseAreNotRequiredToWatch() throws Exception {
        int number = formJob("old", 2, 40_000);
        Thread.sleep(300);
        assertThat(service.dataplane().job(number)).isPresent();
        assertThat(diagnose(number, jobId(number)).getInstalled()).isTrue();
    }

    @Test
    void watchesAreRefusedForUnknownJobsOtherRunsAndTwiceForARank() throws Exception {
        JoinResponse joined = formWatchedJob("job", 2, 40_000, LONG_TIMEOUT_MS).get(0);
        int number = joined.getJobNumber();
        watch(channel, number, joined.getJobId(), 0);
        Watch twice = new Watch();
        ControllerGrpc.newStub(channel).watch(WatchRequest.newBuilder().setJobNumber(number).setJobId(joined.getJobId())
                .setRank(0).build(), observerOf(twice));
        assertStatus(Status.fromThrowable((Throwable) twice.next(5_000)), Code.ALREADY_EXISTS, "already watched");
        Watch otherRun = new Watch();
        ControllerGrpc.newStub(channel).watch(WatchRequest.newBuilder().setJobNumber(number).setRank(1)
                .setJobId(joined.getJobId() + 1).build(), observerOf(otherRun));
        assertStatus(Status.fromThrowable((Throwable) otherRun.next(5_000)), Code.NOT_FOUND, "no job number " + number);
        // A Leave of another run of the number must not count either.
        assertFails(() -> stub().leave(LeaveRequest.newBuilder().setJobNumber(number).setRank(1)
                .setJobId(joined.getJobId() + 1).build()), Code.NOT_FOUND, "no job number " + number);
        assertThat(diagnose(number, joined.getJobId() + 1).getKnown()).isFalse();
    }

    @Test
    void aJoiningRankWhoseCallerGoesAwayNoLongerCounts() throws Exception {
        ManagedChannel dying = connection();
        JoinRequest first = joinRequest("late", 0, params(2), 40_000).build();
        CompletableFuture<JoinResponse> lost = async(() -> ControllerGrpc.newBlockingStub(dying).join(first));
        assertStillWaiting(lost, 300);
        dying.shutdownNow();
        Thread.sleep(200);
        // Rank 0 restarts and joins again: it is not refused as "already joined".
        int number = formJob("late", 2, 40_000);
        assertThat(service.dataplane().job(number)).isPresent();
    }

    private static StreamObserver<JobEvent> observerOf(Watch w) {
        return new StreamObserver<>() {
            @Override
            public void onNext(JobEvent value) {
                w.received.add(value);
            }

            @Override
            public void onError(Throwable t) {
                w.received.add(t);
            }

            @Override
            public void onCompleted() {
                w.received.add(COMPLETED);
            }
        };
    }
}
