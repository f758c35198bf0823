package io.switchml.controller;

import io.grpc.Status;
import io.switchml.controller.compat.proto.PacketSize;
import io.switchml.controller.compat.proto.SessionGrpc;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.controller.proto.DiagnoseRequest;
import io.switchml.controller.proto.IssueJobSecretRequest;
import io.switchml.controller.proto.JobDetailRequest;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.SetDropProbabilitiesRequest;
import io.switchml.controller.proto.StatusRequest;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A switch with an operator token that requires job secrets: every refusal, and what still works. */
class AuthorizationTest extends ControllerTestSupport {
    private static final String OPERATOR = "operator-token-0123456789";
    private static final String SECRET_A = "secret-of-team-a-0123456789";
    private static final String SECRET_B = "secret-of-team-b-0123456789";

    @Override
    ControllerSecurity security() {
        return new ControllerSecurity().operatorToken(OPERATOR).requireJobSecrets(true);
    }

    /** Forms a two-rank job whose ranks present {@code secret}; returns rank 0's answer. */
    private JoinResponse formWithSecret(String job, String secret, int basePort) {
        CompletableFuture<JoinResponse> r0 = joinAs(secret, joinRequest(job, 0, params(2), basePort).build());
        CompletableFuture<JoinResponse> r1 = joinAs(secret, joinRequest(job, 1, params(2), basePort).build());
        get(r1);
        return get(r0);
    }

    @Test
    void inspectionAndAdministrationNeedTheOperatorToken() {
        assertFails(() -> stub().status(StatusRequest.getDefaultInstance()), Status.Code.UNAUTHENTICATED,
                "needs the operator token", "--token-file");
        assertFails(() -> as("wrong-token-0123456789", null).status(StatusRequest.getDefaultInstance()),
                Status.Code.UNAUTHENTICATED, "operator token presented is wrong");
        assertFails(() -> as(null, SECRET_A).jobDetail(JobDetailRequest.newBuilder().setJobName("x").build()),
                Status.Code.UNAUTHENTICATED, "operator token");
        assertFails(() -> stub().setDropProbabilities(SetDropProbabilitiesRequest.newBuilder().setIngress(0).build()),
                Status.Code.UNAUTHENTICATED, "operator token");
        assertFails(() -> stub().issueJobSecret(IssueJobSecretRequest.newBuilder().setJobName("x").build()),
                Status.Code.UNAUTHENTICATED, "operator token");

        assertThat(as(OPERATOR, null).status(StatusRequest.getDefaultInstance()).getJobsCount()).isZero();
    }

    @Test
    void aJoinWithoutASecretIsRefused() {
        assertStatus(failure(joinAs(null, joinRequest("open", 0, 1))), Status.Code.UNAUTHENTICATED,
                "requires a job secret", "jobSecretFile");
        assertThat(as(OPERATOR, null).status(StatusRequest.getDefaultInstance()).getFormingJobsCount()).isZero();
    }

    @Test
    void anotherTenantCannotJoinAFormingJob() {
        CompletableFuture<JoinResponse> rank0 = joinAs(SECRET_A, joinRequest("team-a", 0, params(2), 41_000).build());
        awaitForming("team-a");
        assertStatus(failure(joinAs(SECRET_B, joinRequest("team-a", 1, params(2), 41_000).build())),
                Status.Code.PERMISSION_DENIED, "does not match");
        assertThat(rank0).as("the stranger did not complete the job").isNotDone();

        get(joinAs(SECRET_A, joinRequest("team-a", 1, params(2), 41_000).build()));
        assertThat(get(rank0).getJobNumber()).isNotNegative();
    }

    @Test
    void anotherTenantCannotUseARunningJob() {
        JoinResponse job = formWithSecret("team-a", SECRET_A, 42_000);
        int number = job.getJobNumber();

        assertStatus(failure(async(() -> as(null, SECRET_B).barrier(barrier(number, 0, 1, LONG_TIMEOUT_MS)))),
                Status.Code.PERMISSION_DENIED, "protected by a job secret");
        assertFails(() -> as(null, SECRET_B).leave(leave(number, 0)), Status.Code.PERMISSION_DENIED, "job secret");
        assertFails(() -> stub().leave(leave(number, 1)), Status.Code.PERMISSION_DENIED, "presented none");
        assertThat(as(null, SECRET_B).diagnose(DiagnoseRequest.newBuilder().setJobNumber(number).build()).getKnown())
                .as("a stranger learns nothing about the job").isFalse();
        assertStatus(failure(joinAs(SECRET_B, joinRequest("team-a", 0, params(2), 42_500).build())),
                Status.Code.PERMISSION_DENIED, "does not match");

        // The job itself is untouched: its ranks meet, and the operator sees it.
        CompletableFuture<Object> b0 = async(() -> as(null, SECRET_A).barrier(barrier(number, 0, 1, LONG_TIMEOUT_MS)));
        CompletableFuture<Object> b1 = async(() -> as(null, SECRET_A).barrier(barrier(number, 1, 1, LONG_TIMEOUT_MS)));
        get(b0);
        get(b1);
        assertThat(as(null, SECRET_A).diagnose(DiagnoseRequest.newBuilder().setJobNumber(number).setJobId(jobId(number))
                .build()).getKnown()).isTrue();
        assertThat(as(OPERATOR, null).status(StatusRequest.getDefaultInstance()).getJobsList())
                .extracting(j -> j.getJobName()).containsExactly("team-a");
        as(null, SECRET_A).leave(leave(number, 0));
        as(OPERATOR, null).leave(leave(number, 1));
        assertThat(as(OPERATOR, null).status(StatusRequest.getDefaultInstance()).getJobsCount()).isZero();
    }

    @Test
    void anIssuedSecretIsTheOnlyOneAJobOfThatNameAccepts() {
        String issued = as(OPERATOR, null).issueJobSecret(IssueJobSecretRequest.newBuilder().setJobName("issued").build())
                .getSecret();
        assertThat(issued).hasSizeGreaterThanOrEqualTo(Secrets.MIN_LENGTH).isNotEqualTo(
                as(OPERATOR, null).issueJobSecret(IssueJobSecretRequest.newBuilder().setJobName("other").build()).getSecret());

        assertStatus(failure(joinAs(SECRET_A, joinRequest("issued", 0, 1))), Status.Code.PERMISSION_DENIED,
                "the operator issued");
        JoinResponse joined = get(joinAs(issued, joinRequest("issued", 0, 1)));
        assertFails(() -> as(OPERATOR, null).issueJobSecret(IssueJobSecretRequest.newBuilder().setJobName("issued").build()),
                Status.Code.FAILED_PRECONDITION, "running");
        as(null, issued).leave(leave(joined.getJobNumber(), 0));
    }

    @Test
    void switchmlSessionsAreListedAndTheOperatorCanEndThem() {
        // SwitchML's own protocol (left on here) carries no credentials; its sessions count like any job.
        assertThat(SessionGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).udpSession(
                UdpSessionRequest.newBuilder().setSessionId(9).setRank(0).setNumWorkers(1).setIpv4(0x7F00_0001)
                        .setPacketSize(PacketSize.MTU_256).build()).getSessionId()).isEqualTo(9);
        assertThat(as(OPERATOR, null).status(StatusRequest.getDefaultInstance()).getJobsList())
                .singleElement().satisfies(j -> {
                    assertThat(j.getJobName()).isEqualTo("switchml-session-9");
                    assertThat(j.getJobNumber()).isEqualTo(9);
                    assertThat(j.getWorkersList()).containsExactly("rank 0 127.0.0.1 any port (SwitchML)");
                });
        assertThat(service.dataplane().slotPool().usedSlots()).isPositive();

        assertFails(() -> as(null, SECRET_A).leave(leave(9, 0)), Status.Code.NOT_FOUND, "no job number 9");
        assertThat(service.dataplane().job(9)).isPresent();
        as(OPERATOR, null).leave(leave(9, 0));
        assertThat(service.dataplane().job(9)).isEmpty();
        assertThat(service.dataplane().slotPool().usedSlots()).isZero();
        assertThat(as(OPERATOR, null).status(StatusRequest.getDefaultInstance()).getJobsList()).isEmpty();
    }

    private void awaitForming(String job) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (as(OPERATOR, null).status(StatusRequest.getDefaultInstance()).getFormingJobsList().stream()
                .noneMatch(j -> j.getJobName().equals(job))) {
            assertThat(System.nanoTime()).as("job '%s' forming within 10 s", job).isLessThan(deadline);
            Thread.onSpinWait();
        }
    }
}
