package io.switchml.controller;

import io.grpc.Status.Code;
import io.switchml.controller.proto.DropProbabilities;
import io.switchml.controller.proto.JobDetailRequest;
import io.switchml.controller.proto.JobDetailResponse;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.SetDropProbabilitiesRequest;
import io.switchml.controller.proto.SlotCopy;
import io.switchml.controller.proto.StatusRequest;
import io.switchml.controller.proto.StatusResponse;
import io.switchml.controller.proto.TransportReport;
import io.switchml.controller.proto.WorkerTransport;
import io.switchml.controller.proto.WorkerStatus;
import org.junit.jupiter.api.Test;

import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** The inspection RPCs a running switch answers: Status, JobDetail and SetDropProbabilities. */
class InspectionTest extends ControllerTestSupport {

    @Test
    void aFormingJobIsListedWithTheRanksThatJoined() {
        CompletableFuture<JoinResponse> rank1 = joinAsync(joinRequest("forming", 1, params(2), 42_000).build());
        assertThat(waitForFormingJobs()).singleElement().satisfies(job -> {
            assertThat(job.getInstalled()).isFalse();
            assertThat(job.getJobName()).isEqualTo("forming");
            assertThat(job.getEndpointsList()).extracting(WorkerStatus::getRank).containsExactly(1);
        });
        JobDetailResponse detail = stub().jobDetail(JobDetailRequest.newBuilder().setJobName("forming").build());
        assertThat(detail.getJob().getInstalled()).isFalse();
        assertThat(detail.getOnSwitch()).isFalse();

        get(joinAsync(joinRequest("forming", 0, params(2), 42_000).build()));
        get(rank1);
        StatusResponse status = stub().status(StatusRequest.getDefaultInstance());
        assertThat(status.getFormingJobsList()).isEmpty();
        assertThat(status.getJobsList()).singleElement().satisfies(job -> {
            assertThat(job.getInstalled()).isTrue();
            assertThat(job.getEndpointsList()).extracting(WorkerStatus::getRank).containsExactly(0, 1);
            assertThat(job.getEndpoints(1).getPortsList()).containsExactly(42_010);
        });
    }

    @Test
    void jobDetailHasEachRanksLatestTransportReport() {
        List<JoinResponse> joined = joinAll(List.of(joinRequest("transport", 0, params(2), 44_000).build(),
                joinRequest("transport", 1, params(2), 44_100).build()));
        int number = joined.get(0).getJobNumber();
        long id = joined.get(0).getJobId();
        WorkerTransport first = WorkerTransport.newBuilder().setCongestionControl(true).setCongestionWindow(7.5)
                .setBaseRttNs(900_000).setSmoothedRttNs(1_500_000).setPacketsSent(100).setRetransmissions(2)
                .setWindowDelayDecreases(3).setWindowLossDecreases(1).build();
        stub().reportTransport(TransportReport.newBuilder().setJobNumber(number).setJobId(id).setRank(1)
                .setTransport(first).build());
        stub().reportTransport(TransportReport.newBuilder().setJobNumber(number).setJobId(id).setRank(1)
                .setTransport(first.toBuilder().setPacketsSent(200).setRank(0)).build()); // the report's rank counts
        JobDetailResponse detail = stub().jobDetail(JobDetailRequest.newBuilder().setJobNumber(number).build());
        assertThat(detail.getTransportList()).singleElement().satisfies(t -> {
            assertThat(t.getRank()).isEqualTo(1);
            assertThat(t.getPacketsSent()).as("the latest report").isEqualTo(200);
            assertThat(t.getCongestionWindow()).isEqualTo(7.5);
            assertThat(t.getWindowDelayDecreases()).isEqualTo(3);
            assertThat(t.getReportedMsAgo()).isNotNegative();
        });
        assertFails(() -> stub().reportTransport(TransportReport.newBuilder().setJobNumber(number).setJobId(id + 1)
                .setRank(0).setTransport(first).build()), Code.NOT_FOUND, "none this call may act on");
        assertFails(() -> stub().reportTransport(TransportReport.newBuilder().setJobNumber(number).setRank(0)
                .setTransport(first).build()), Code.NOT_FOUND, "none this call may act on");
        assertFails(() -> stub().reportTransport(TransportReport.newBuilder().setJobNumber(number).setJobId(id).setRank(5)
                .setTransport(first).build()), Code.INVALID_ARGUMENT, "rank 5");
    }

    @Test
    void jobDetailShowsWhichRanksContributedToEachSlotCopyInProgress() throws Exception {
        JobParameters p = params(3);
        try (DatagramSocket rank0 = new DatagramSocket(0, InetAddress.getByName(LOOPBACK));
             DatagramSocket rank1 = new DatagramSocket(0, InetAddress.getByName(LOOPBACK))) {
            List<JoinResponse> joined = joinAll(List.of(
                    withPort(joinRequest("bitmaps", 0, p, 0), rank0), withPort(joinRequest("bitmaps", 1, p, 0), rank1),
                    joinRequest("bitmaps", 2, p, 43_000).build()));
            int number = joined.get(0).getJobNumber();
            // Slot 3, set 0 (round 0): ranks 0 and 1 in, rank 2 missing. Slot 5, set 1 (round 1): rank 1 only.
            sendPacket(rank0, number, 0, 3, 0);
            sendPacket(rank1, number, 0, 3, 0);
            sendPacket(rank1, number, 1, 5, 1);
            awaitCounter("contributions", 3);

            JobDetailResponse byNumber = stub().jobDetail(JobDetailRequest.newBuilder().setJobNumber(number).build());
            JobDetailResponse byName = stub().jobDetail(JobDetailRequest.newBuilder().setJobName("bitmaps").build());
            assertThat(byName).isEqualTo(byNumber);
            assertThat(byNumber.getOnSwitch()).isTrue();
            assertThat(byNumber.getJobId()).as("the members' credential is not shown without the operator's token")
                    .isZero();
            assertThat(byNumber.getSlots()).isEqualTo(8);
            assertThat(byNumber.getIncompleteSlots()).isEqualTo(2);
            assertThat(byNumber.getMissingRanksList()).containsExactly(0, 2);
            assertThat(byNumber.getSlotCopiesList()).containsExactly(
                    SlotCopy.newBuilder().setSlot(3).setSet(0).setRound(0).setRemaining(1).addAllContributedRanks(List.of(0, 1)).build(),
                    SlotCopy.newBuilder().setSlot(5).setSet(1).setRound(1).setRemaining(2).addContributedRanks(1).build());
            assertThat(byNumber.getSlotCopiesTruncated()).isFalse();

            JobDetailResponse firstOnly = stub().jobDetail(JobDetailRequest.newBuilder().setJobNumber(number)
                    .setMaxSlotCopies(1).build());
            assertThat(firstOnly.getSlotCopiesCount()).isEqualTo(1);
            assertThat(firstOnly.getSlotCopiesTruncated()).isTrue();
            assertThat(firstOnly.getIncompleteSlots()).isEqualTo(2);
        }
    }

    @Test
    void anUnknownJobIsNotFound() {
        assertFails(() -> stub().jobDetail(JobDetailRequest.newBuilder().setJobNumber(7).build()), Code.NOT_FOUND,
                "no job number 7");
        assertFails(() -> stub().jobDetail(JobDetailRequest.newBuilder().setJobName("nope").build()), Code.NOT_FOUND,
                "no job named 'nope'");
        assertFails(() -> stub().jobDetail(JobDetailRequest.getDefaultInstance()), Code.INVALID_ARGUMENT,
                "by number or name");
    }

    @Test
    void dropProbabilitiesChangeWhileTheSwitchRunsAndOnlyWithinZeroToOne() {
        DropProbabilities set = stub().setDropProbabilities(SetDropProbabilitiesRequest.newBuilder().setIngress(0.25).build());
        assertThat(set).isEqualTo(DropProbabilities.newBuilder().setIngress(0.25).setEgress(0).build());
        set = stub().setDropProbabilities(SetDropProbabilitiesRequest.newBuilder().setEgress(0.125).build());
        assertThat(set).isEqualTo(DropProbabilities.newBuilder().setIngress(0.25).setEgress(0.125).build());
        assertThat(service.dataplane().ingressDropProbability()).isEqualTo(0.25);
        assertThat(service.dataplane().egressDropProbability()).isEqualTo(0.125);
        assertThat(stub().status(StatusRequest.getDefaultInstance()).getDropProbabilities()).isEqualTo(set);

        assertFails(() -> stub().setDropProbabilities(SetDropProbabilitiesRequest.newBuilder().setIngress(0.5)
                .setEgress(1.5).build()), Code.INVALID_ARGUMENT, "egress drop probability 1.5 is outside [0, 1)");
        assertFails(() -> stub().setDropProbabilities(SetDropProbabilitiesRequest.newBuilder().setIngress(1).build()),
                Code.INVALID_ARGUMENT, "ingress drop probability 1.0");
        assertFails(() -> stub().setDropProbabilities(SetDropProbabilitiesRequest.newBuilder().setIngress(Double.NaN).build()),
                Code.INVALID_ARGUMENT, "NaN");
        assertFails(() -> stub().setDropProbabilities(SetDropProbabilitiesRequest.getDefaultInstance()),
                Code.INVALID_ARGUMENT, "ingress or the egress");
        assertThat(service.dataplane().ingressDropProbability()).as("unchanged after a refusal").isEqualTo(0.25);
        assertThat(service.dataplane().egressDropProbability()).isEqualTo(0.125);
    }

    private List<io.switchml.controller.proto.JobStatus> waitForFormingJobs() {
        long deadline = System.nanoTime() + CLIENT_DEADLINE_MS * 1_000_000;
        while (System.nanoTime() < deadline) {
            List<io.switchml.controller.proto.JobStatus> forming = stub().status(StatusRequest.getDefaultInstance())
                    .getFormingJobsList();
            if (!forming.isEmpty()) {
                return forming;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no forming job listed");
    }

    private static JoinRequest withPort(JoinRequest.Builder request, DatagramSocket socket) {
        return request.clearPorts().addPorts(socket.getLocalPort()).build();
    }
}
