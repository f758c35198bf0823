package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status.Code;
import io.switchml.controller.proto.DiagnoseRequest;
import io.switchml.controller.proto.IssueJobSecretRequest;
import io.switchml.controller.proto.JobDetailRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.LeaveRequest;
import io.switchml.controller.proto.TransportReport;
import io.switchml.controller.proto.WorkerTransport;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * On a switch without credentials a job still belongs to its ranks: a stranger who knows its number and
 * ranks (from `switchml ctl jobs`) but not the job id its joins returned cannot end it, meet in it, report
 * for it or read its id, and cannot issue secrets that would lock its future ranks out of a name.
 */
class OwnershipTest extends ControllerTestSupport {
    private static final String SECRET = "launchers-secret-0123456789";

    @Test
    void aStrangerCannotEndMeetInOrReportForAnotherJob() {
        int number = formJob("victim", 2, 40_000);
        LeaveRequest strangersLeave = LeaveRequest.newBuilder().setJobNumber(number).setRank(1).build();
        assertFails(() -> stub().leave(strangersLeave), Code.NOT_FOUND, "none this call may act on");
        assertFails(() -> stub().barrier(barrier(number, 0, 1, 1_000).toBuilder().setJobId(0).build()),
                Code.NOT_FOUND, "none this call may act on");
        assertFails(() -> stub().broadcast(broadcast(number, 0, 0, 1, "forged", 1_000).toBuilder().setJobId(0).build()),
                Code.NOT_FOUND, "none this call may act on");
        assertFails(() -> stub().reportTransport(TransportReport.newBuilder().setJobNumber(number).setRank(0)
                .setTransport(WorkerTransport.getDefaultInstance()).build()), Code.NOT_FOUND, "none this call may act on");
        assertThat(stub().diagnose(DiagnoseRequest.newBuilder().setJobNumber(number).build()).getKnown())
                .as("a stranger learns nothing from Diagnose").isFalse();
        assertThat(stub().jobDetail(JobDetailRequest.newBuilder().setJobNumber(number).build()).getJobId())
                .as("the credential is never shown without the operator's token").isZero();

        // The job is untouched: its ranks still meet, broadcast and leave with the id their join returned.
        assertThat(service.dataplane().job(number)).isPresent();
        CompletableFuture<Object> b0 = async(() -> stub().barrier(barrier(number, 0, 1, LONG_TIMEOUT_MS)));
        CompletableFuture<Object> b1 = async(() -> stub().barrier(barrier(number, 1, 1, LONG_TIMEOUT_MS)));
        get(b0);
        get(b1);
        List<CompletableFuture<String>> values = List.of(
                async(() -> stub().broadcast(broadcast(number, 0, 0, 2, "real", LONG_TIMEOUT_MS)).getValue().toStringUtf8()),
                async(() -> stub().broadcast(broadcast(number, 1, 0, 2, "", LONG_TIMEOUT_MS)).getValue().toStringUtf8()));
        assertThat(values).allSatisfy(v -> assertThat(get(v)).isEqualTo("real"));
        stub().leave(leave(number, 0));
        stub().leave(leave(number, 1));
        assertThat(service.dataplane().job(number)).isEmpty();
    }

    @Test
    void aSwitchWithoutAnOperatorTokenIssuesNoSecrets() {
        assertFails(() -> stub().issueJobSecret(IssueJobSecretRequest.newBuilder().setJobName("future").build()),
                Code.PERMISSION_DENIED, "only the operator issues job secrets", "--operator-token-file");
        // The name stays free for the job's own ranks.
        int number = formJob("future", 2, 40_000);
        assertThat(service.dataplane().job(number)).isPresent();
    }

    /** Security round 4, finding 9: Leave with no id or a wrong one says the same of a live number as of a free one. */
    @Test
    void aStrangerCannotTellALiveJobNumberFromAFreeOne() {
        int live = formJob("oracle", 2, 41_000);
        int free = live + 1;
        for (long guess : new long[] {0, 12345}) {
            String aboutLive = assertFails(() -> stub().leave(LeaveRequest.newBuilder().setJobNumber(live).setJobId(guess)
                    .setRank(0).build()), Code.NOT_FOUND, "none this call may act on");
            String aboutFree = assertFails(() -> stub().leave(LeaveRequest.newBuilder().setJobNumber(free).setJobId(guess)
                    .setRank(0).build()), Code.NOT_FOUND, "none this call may act on");
            assertThat(aboutLive.replace(String.valueOf(live), "N")).isEqualTo(aboutFree.replace(String.valueOf(free), "N"));
        }
        assertThat(service.dataplane().job(live)).isPresent();
    }

    /**
     * Security round 4, finding 2: the launchers give every job a secret, so on a default switch a stranger
     * without it who claims a present rank is refused alone, and the forming job goes on.
     */
    @Test
    void aStrangerWhoClaimsASeatOfAJobWithASecretIsRefusedAndTheJobForms() throws InterruptedException {
        CompletableFuture<JoinResponse> forming = joinAs(SECRET, joinRequest("forming", 0, params(2), 44_000).build());
        awaitPendingJoins(1);
        for (String secret : new String[] {null, "another-secret-0123456789"}) {
            assertStatus(failure(joinAs(secret, joinRequest("forming", 0, params(2), 45_000).build())), Code.PERMISSION_DENIED,
                    "does not match");
            assertStatus(failure(joinAs(secret, joinRequest("forming", 1, params(2), 45_000).build())), Code.PERMISSION_DENIED,
                    "does not match");
        }
        assertThat(forming).as("the strangers neither cancelled nor completed the job").isNotDone();
        get(joinAs(SECRET, joinRequest("forming", 1, params(2), 44_000).build()));
        assertThat(service.dataplane().job(get(forming).getJobNumber())).isPresent();
    }

    /** A stranger who comes first binds the job to its own secret (or none): the real ranks fail loudly, never join it. */
    @Test
    void aStrangerWhoComesFirstMakesTheRealRanksFailLoudly() throws InterruptedException {
        CompletableFuture<JoinResponse> stranger = joinAs(null, joinRequest("early", 1, 2));
        awaitPendingJoins(1);
        assertStatus(failure(joinAs(SECRET, joinRequest("early", 0, params(2), 46_000).build())), Code.PERMISSION_DENIED,
                "rank 0 cannot join job 'early'", "does not match", "every rank of a job presents the same secret");
        assertThat(stranger).as("the stranger is alone in its job").isNotDone();
    }

    /** Security round 4, finding 9: wrong job ids are counted, and a guesser is refused beyond its budget. */
    @Test
    void guessesOfJobIdsAreCountedAndLimited() {
        int live = formJob("guessed", 2, 47_000);
        long before = service.foreignJobCalls();
        int refused = 0;
        for (int guess = 1; guess <= JobRegistry.FOREIGN_CALLS_BURST + 200; guess++) {
            LeaveRequest wrong = LeaveRequest.newBuilder().setJobNumber(live).setJobId(guess).setRank(0).build();
            io.grpc.Status status = io.grpc.Status.fromThrowable(
                    org.assertj.core.api.Assertions.catchThrowable(() -> stub().leave(wrong)));
            if (status.getCode() == Code.RESOURCE_EXHAUSTED) {
                assertThat(status.getDescription()).contains("too many calls for jobs this caller is no member of",
                        "tenant " + selfTenant());
                refused++;
            } else {
                assertThat(status.getCode()).isEqualTo(Code.NOT_FOUND);
            }
        }
        System.out.printf("%d wrong job ids: %d answered NOT_FOUND, %d refused; counted %d%n",
                JobRegistry.FOREIGN_CALLS_BURST + 200, JobRegistry.FOREIGN_CALLS_BURST + 200 - refused, refused,
                service.foreignJobCalls() - before);
        assertThat(service.foreignJobCalls() - before).isEqualTo(JobRegistry.FOREIGN_CALLS_BURST + 200);
        assertThat(refused).isPositive();
        // The job's own ranks, with their id, are untouched.
        stub().leave(leave(live, 0));
        stub().leave(leave(live, 1));
        assertThat(service.dataplane().job(live)).isEmpty();
    }
}
