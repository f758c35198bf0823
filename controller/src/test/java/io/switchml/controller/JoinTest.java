package io.switchml.controller;

import io.grpc.Status.Code;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.StatusRequest;
import io.switchml.controller.proto.StatusResponse;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.WorkerEndpoint;
import io.switchml.protocol.PacketKey;
import io.switchml.protocol.PayloadSize;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class JoinTest extends ControllerTestSupport {

    @Test
    void threeRanksJoinAndTheJobIsInstalledInTheSwitch() throws Exception {
        JobParameters p = params(3, 2);
        List<JoinRequest> requests = new ArrayList<>();
        // Arrival order differs from rank order: the switch must still see the workers in rank order.
        for (int r = 2; r >= 0; r--) {
            requests.add(joinRequest("train", r, p, 41_000).build());
        }
        List<JoinResponse> responses = joinAll(requests);

        int number = responses.get(0).getJobNumber();
        int[] switchPorts = service.dataplane().ports();
        assertThat(switchPorts).isNotEmpty();
        for (JoinResponse response : responses) {
            assertThat(response.getJobNumber()).isEqualTo(number);
            assertThat(response.getSwitchAddress()).isEqualTo(LOOPBACK);
            assertThat(response.getSwitchPortsList()).containsExactlyElementsOf(
                    Arrays.stream(switchPorts).boxed().toList());
        }

        JobSpec spec = service.dataplane().job(number).orElseThrow();
        assertThat(spec.name()).isEqualTo("train");
        assertThat(spec.workers()).isEqualTo(3);
        assertThat(spec.threads()).isEqualTo(2);
        assertThat(spec.slotsPerThread()).isEqualTo(8);
        assertThat(spec.size()).isEqualTo(PayloadSize.B256);
        InetAddress loopback = InetAddress.getByName(LOOPBACK);
        assertThat(spec.endpoints()).containsExactly(
                WorkerEndpoint.of(loopback, 41_000, 41_001),
                WorkerEndpoint.of(loopback, 41_010, 41_011),
                WorkerEndpoint.of(loopback, 41_020, 41_021));

        StatusResponse status = stub().status(StatusRequest.getDefaultInstance());
        assertThat(status.getJobsList()).hasSize(1);
        JobStatus job = status.getJobs(0);
        assertThat(job.getJobNumber()).isEqualTo(number);
        assertThat(job.getJobName()).isEqualTo("train");
        assertThat(job.getParameters()).isEqualTo(p);
        assertThat(job.getWorkersList()).containsExactly(
                "rank 0 127.0.0.1 ports [41000, 41001]",
                "rank 1 127.0.0.1 ports [41010, 41011]",
                "rank 2 127.0.0.1 ports [41020, 41021]");
        assertThat(status.getCountersMap()).containsKeys("packets_received", "results_sent", "drops_unknown_source");
        assertThat(status.getCountersMap()).isEqualTo(service.dataplane().counters());
    }

    @Test
    void aSingleRankJobFormsAtOnce() {
        JoinResponse response = remember(stub().join(joinRequest("solo", 0, 1)));
        assertThat(service.dataplane().job(response.getJobNumber())).isPresent();
    }

    static Stream<Arguments> invalidJoins() {
        return Stream.of(
                invalid("empty job name", b -> b.setJobName(""), "job name must have 1..200 characters"),
                invalid("job name of 201 characters", b -> b.setJobName("x".repeat(201)), "job name"),
                invalid("job name with NUL", b -> b.setJobName("a\0b"), "job name has the unprintable character U+0000 at index 1"),
                invalid("job name with a newline", b -> b.setJobName("job\nINFO forged log line"),
                        "job name has the unprintable character U+000A at index 3"),
                invalid("job name with a right-to-left override", b -> b.setJobName("job\u202Egnp.exe"),
                        "job name has the unprintable character U+202E"),
                invalid("worker address 0.0.0.0", b -> b.setAddress("0.0.0.0"),
                        "address 0.0.0.0 is in 0.0.0.0/8", "switchml.localAddress"),
                invalid("worker address 255.255.255.255", b -> b.setAddress("255.255.255.255"),
                        "address 255.255.255.255 is the broadcast address 255.255.255.255", "own unicast address"),
                invalid("worker address 127.255.255.255", b -> b.setAddress("127.255.255.255"),
                        "address 127.255.255.255 is the broadcast address of the loopback network", "own unicast address"),
                invalid("worker address 224.0.0.1", b -> b.setAddress("224.0.0.1"),
                        "address 224.0.0.1 is a multicast address (224.0.0.0/4)"),
                invalid("worker address 239.255.255.250", b -> b.setAddress("239.255.255.250"), "is a multicast address"),
                invalid("worker address 240.0.0.1", b -> b.setAddress("240.0.0.1"), "is in the reserved 240.0.0.0/4"),
                invalid("rank == num_workers", b -> b.setRank(3), "rank 3 outside 0..2"),
                invalid("rank >= 2^31 (uint32)", b -> b.setRank(-1), "rank 4294967295 outside 0..2"),
                invalid("num_workers 0", b -> b.setParameters(b.getParameters().toBuilder().setNumWorkers(0)),
                        "num_workers 0 outside 1..256"),
                invalid("num_workers 257", b -> b.setParameters(b.getParameters().toBuilder().setNumWorkers(257)),
                        "num_workers 257 outside 1..256"),
                invalid("elements_per_packet 100",
                        b -> b.setParameters(b.getParameters().toBuilder().setElementsPerPacket(100)),
                        "elements per packet must be one of", "not 100"),
                invalid("threads 0", b -> b.setParameters(b.getParameters().toBuilder().setThreads(0)).clearPorts(),
                        "threads 0 outside 1..16"),
                invalid("slots_per_thread 0", b -> b.setParameters(b.getParameters().toBuilder().setSlotsPerThread(0)),
                        "slots_per_thread x threads = 0"),
                invalid("two ports for one thread", b -> b.addPorts(40_001), "2 UDP ports given for 1 threads"),
                invalid("no ports", JoinRequest.Builder::clearPorts, "0 UDP ports given for 1 threads"),
                invalid("port 0", b -> b.setPorts(0, 0), "UDP port 0 outside 1..65535"),
                invalid("port 65536", b -> b.setPorts(0, 65_536), "UDP port 65536 outside 1..65535"),
                invalid("timeout_ms 0", b -> b.setTimeoutMs(0), "timeout_ms 0 outside 1..3600000"),
                invalid("address not-an-ip", b -> b.setAddress("not-an-ip"),
                        "address 'not-an-ip' is not an IPv4 address"),
                invalid("IPv6 address", b -> b.setAddress("::1"), "address '::1' is not an IPv4 address"),
                invalid("IPv6 address in long form", b -> b.setAddress("fe80:0:0:0:0:0:0:1"),
                        "address 'fe80:0:0:0:0:0:0:1' is not an IPv4 address"),
                invalid("octet above 255", b -> b.setAddress("10.0.0.256"),
                        "address '10.0.0.256' is not an IPv4 address"),
                invalid("empty address", b -> b.setAddress(""), "address '' is not an IPv4 address"));
    }

    private static Arguments invalid(String what, UnaryOperator<JoinRequest.Builder> change, String... fragments) {
        return Arguments.of(what, change, fragments);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidJoins")
    void invalidJoinIsRefusedAtOnceNamingTheProblem(String what, UnaryOperator<JoinRequest.Builder> change,
                                                    String[] fragments) {
        JoinRequest request = change.apply(joinRequest("job", 1, params(3), 40_000)).build();
        // Refused, not parked: a parked join would end in DEADLINE_EXCEEDED after its 40 s wait instead.
        String description = assertFails(() -> stub().join(request), Code.INVALID_ARGUMENT, fragments);
        assertThat(description).startsWith("invalid join request: ");
        assertThat(service.pendingJoins()).as("ranks left waiting").isZero();
        assertThat(stub().status(StatusRequest.getDefaultInstance()).getJobsList()).isEmpty();
    }

    @Test
    void aJobNameOfAnyPrintableTextForms() {
        String name = "résumé 训练 run-7 🚀 (Ω)";
        JoinResponse response = stub().join(joinRequest(name, 0, 1));
        assertThat(service.dataplane().job(response.getJobNumber())).isPresent();
        assertThat(stub().status(StatusRequest.getDefaultInstance()).getJobs(0).getJobName()).isEqualTo(name);
    }

    @Test
    void theBroadcastAddressOfANetworkOfTheSwitchsHostIsNoWorkerAddress() throws Exception {
        InetAddress broadcast = NetworkInterface.networkInterfaces()
                .flatMap(nic -> nic.getInterfaceAddresses().stream())
                .map(InterfaceAddress::getBroadcast).filter(Objects::nonNull).findFirst().orElse(null);
        assumeTrue(broadcast != null, "this host has no IPv4 network with a broadcast address");
        JoinRequest request = joinRequest("job", 0, params(1), 40_000).setAddress(broadcast.getHostAddress()).build();
        assertFails(() -> stub().join(request), Code.INVALID_ARGUMENT,
                "address " + broadcast.getHostAddress() + " is the broadcast address of a network of the switch's host");
    }

    @Test
    void theSwitchsOwnAddressAndUdpPortsAreNoWorkerEndpoint() {
        // One spoofed packet from such an endpoint would make the switch answer itself, again and again.
        int switchPort = service.dataplane().ports()[0];
        JoinRequest self = joinRequest("looped", 0, params(2), 40_000).setPorts(0, switchPort).build();
        assertFails(() -> stub().join(self), Code.INVALID_ARGUMENT, "address 127.0.0.1 with UDP port " + switchPort
                + " is the switch's own", "send the rank's results to itself", "switchml.localAddress");
        assertThat(service.pendingJoins()).as("nothing waits").isZero();
        // Nor the switch's controller port on its host (security round 5): the results would go to its own socket.
        int tcp = service.controllerPort();
        JoinRequest controller = joinRequest("looped", 0, params(2), 40_000).setPorts(0, tcp).build();
        assertFails(() -> stub().join(controller), Code.INVALID_ARGUMENT, "address 127.0.0.1 with UDP port " + tcp
                + " is the switch's own host and its controller's port", "switchml.localAddress");
        assertThat(service.pendingJoins()).as("nothing waits").isZero();
        // The same rank from its own port forms the job.
        List<JoinResponse> formed = joinAll(List.of(joinRequest("looped", 0, 2), joinRequest("looped", 1, 2)));
        assertThat(service.dataplane().job(formed.get(0).getJobNumber())).isPresent();
    }

    @Test
    void aRefusedJoinLeavesNoTraceSoTheJobStillForms() {
        // An invalid request must not create a forming job whose (wrong) parameters later ranks clash with.
        JoinRequest bad = joinRequest("job", 0, params(2), 40_000).setTimeoutMs(0).build();
        assertFails(() -> stub().join(bad), Code.INVALID_ARGUMENT, "timeout_ms");
        formJob("job", 2, 40_000);
    }

    @Test
    void aSeatClaimedTwiceCancelsTheFormingJobForEveryWaitingRank() throws InterruptedException {
        // Nothing tells the rightful rank 1 from a stranger: every waiting rank learns it at once, not at its timeout.
        CompletableFuture<JoinResponse> rank0 = joinAsync(joinRequest("job", 0, 3));
        CompletableFuture<JoinResponse> first = joinAsync(joinRequest("job", 1, 3));
        awaitPendingJoins(2);
        CompletableFuture<JoinResponse> second = joinAsync(joinRequest("job", 1, 3));
        for (CompletableFuture<JoinResponse> call : List.of(rank0, first, second)) {
            assertStatus(failure(call), Code.ALREADY_EXISTS, "rank 1 of job 'job' was claimed twice", "job secret");
        }

        // The name is free again: the job forms when each rank joins once.
        List<JoinResponse> formed = joinAll(List.of(joinRequest("job", 0, 3), joinRequest("job", 1, 3),
                joinRequest("job", 2, 3)));
        assertThat(formed).extracting(JoinResponse::getJobNumber).containsOnly(formed.get(0).getJobNumber());
    }

    @Test
    void twoRanksWithTheSameAddressAndPortAreRefused() {
        JoinRequest rank0 = joinRequest("job", 0, params(3), 40_000).setPorts(0, 45_000).build();
        JoinRequest rank1 = joinRequest("job", 1, params(3), 40_000).setPorts(0, 45_000).build();
        CompletableFuture<JoinResponse> a = joinAsync(rank0);
        CompletableFuture<JoinResponse> b = joinAsync(rank1);
        int refusedIndex = firstToFinish(a, b);
        int waitingRank = 1 - refusedIndex;
        assertStatus(failure(refusedIndex == 0 ? a : b), Code.INVALID_ARGUMENT,
                "UDP endpoint 127.0.0.1:45000 is already used by rank " + waitingRank + " of job 'job'");

        // The refused rank can join again with its own port, and the job forms.
        JoinRequest fixed = joinRequest("job", refusedIndex, params(3), 40_000).setPorts(0, 45_001).build();
        List<JoinResponse> rest = joinAll(List.of(fixed, joinRequest("job", 2, 3)));
        assertThat(get(refusedIndex == 0 ? b : a).getJobNumber()).isEqualTo(rest.get(0).getJobNumber());
    }

    @Test
    void zeroBlockSkippingIsAgreedByEveryRankAndEchoed() {
        JobParameters skipping = params(2).toBuilder().setSkipZeroBlocks(true).build();
        List<JoinResponse> joined = joinAll(List.of(joinRequest("skip", 0, skipping, 40_000).build(),
                joinRequest("skip", 1, skipping, 40_000).build()));
        assertThat(joined).allSatisfy(r -> assertThat(r.getSkipZeroBlocks()).isTrue());
        List<JoinResponse> dense = joinAll(List.of(joinRequest("dense", 0, params(2), 42_000).build(),
                joinRequest("dense", 1, params(2), 42_000).build()));
        assertThat(dense).allSatisfy(r -> assertThat(r.getSkipZeroBlocks()).isFalse());

        CompletableFuture<JoinResponse> a = joinAsync(joinRequest("mixed", 0, skipping, 44_000).build());
        CompletableFuture<JoinResponse> b = joinAsync(joinRequest("mixed", 1, params(2), 44_000).build());
        int refused = firstToFinish(a, b);
        assertStatus(failure(refused == 0 ? a : b), Code.INVALID_ARGUMENT, "skipZeroBlocks=" + (refused == 0),
                "skipZeroBlocks=" + (refused != 0), "every worker of a job must be configured alike");
    }

    @Test
    void authenticatedPacketsNeedAJobSecretAndEveryRunOfTheJobGetsItsOwnSalt() throws Exception {
        JobParameters tagged = params(2).toBuilder().setAuthenticatePackets(true).build();
        assertStatus(failure(joinAsync(joinRequest("tagged", 0, tagged, 40_000).build())), Code.FAILED_PRECONDITION,
                "rank 0 cannot join job 'tagged' with authenticated packets", "the job has none",
                "switchml.jobSecretFile");

        String secret = "the-secret-of-the-tagged-job-0123";
        byte[][] salts = new byte[2][];
        for (int run = 0; run < 2; run++) {
            CompletableFuture<JoinResponse> rank0 = joinAs(secret, joinRequest("tagged", 0, tagged, 40_000).build());
            CompletableFuture<JoinResponse> rank1 = joinAs(secret, joinRequest("tagged", 1, tagged, 40_000).build());
            List<JoinResponse> joined = List.of(get(rank0), get(rank1));
            byte[] salt = joined.get(0).getPacketKeySalt().toByteArray();
            assertThat(salt).hasSize(PacketKey.SALT_BYTES);
            assertThat(joined.get(1).getPacketKeySalt().toByteArray()).isEqualTo(salt);
            JobSpec spec = service.dataplane().job(joined.get(0).getJobNumber()).orElseThrow();
            assertThat(spec.authenticated()).isTrue();
            assertThat(joined.get(0).getIpcBoard()).as("tagged packets go over UDP").isEmpty();
            salts[run] = salt;
            for (int r = 0; r < 2; r++) {
                as(null, secret).leave(leave(joined.get(0).getJobNumber(), r));
            }
        }
        assertThat(salts[1]).as("another run, another key").isNotEqualTo(salts[0]);
        // A job without tags gets no salt.
        List<JoinResponse> plain = joinAll(List.of(joinRequest("plain", 0, params(2), 42_000).build(),
                joinRequest("plain", 1, params(2), 42_000).build()));
        assertThat(plain).allSatisfy(r -> assertThat(r.getPacketKeySalt().isEmpty()).isTrue());
    }

    @Test
    void aRankWithOtherParametersThanTheWaitingRanksIsRefusedNamingBoth() {
        JobParameters p = params(2);
        JobParameters other = p.toBuilder().setSlotsPerThread(16).build();
        CompletableFuture<JoinResponse> a = joinAsync(joinRequest("job", 0, p, 40_000).build());
        CompletableFuture<JoinResponse> b = joinAsync(joinRequest("job", 1, other, 40_000).build());
        int refused = firstToFinish(a, b);
        String description = assertStatus(failure(refused == 0 ? a : b), Code.INVALID_ARGUMENT,
                "rank " + refused + " joins job 'job' with parameters {",
                "workers=2, elementsPerPacket=64, slotsPerThread=8, threads=1",
                "workers=2, elementsPerPacket=64, slotsPerThread=16, threads=1",
                "every worker of a job must be configured alike");
        assertThat(description).contains("but the ranks already waiting use {");

        // The waiting rank is not disturbed: a matching rank completes the job.
        JobParameters waitingParameters = refused == 0 ? other : p;
        JoinResponse last = remember(stub().join(joinRequest("job", refused, waitingParameters, 40_000).build()));
        assertThat(get(refused == 0 ? b : a).getJobNumber()).isEqualTo(last.getJobNumber());
    }

    @Test
    void theAnswerCarriesTheOneRoundLimitTheSwitchGranted() {
        JobParameters p = params(2).toBuilder().setOneRoundElements(4096).build();
        List<JoinResponse> joined = joinAll(List.of(joinRequest("job", 0, p, 40_000).build(),
                joinRequest("job", 1, p, 40_000).build()));
        assertThat(joined).allSatisfy(r -> assertThat(r.getOneRoundElements()).isEqualTo(4096));
        List<JoinResponse> without = joinAll(List.of(joinRequest("off", 0, params(2), 41_000).build(),
                joinRequest("off", 1, params(2), 41_000).build()));
        assertThat(without).allSatisfy(r -> assertThat(r.getOneRoundElements()).isZero());
    }

    @Test
    void ranksAskingForDifferentOneRoundLimitsAreRefused() {
        JobParameters p = params(2).toBuilder().setOneRoundElements(4096).build();
        JobParameters other = p.toBuilder().setOneRoundElements(0).build();
        CompletableFuture<JoinResponse> a = joinAsync(joinRequest("job", 0, p, 40_000).build());
        CompletableFuture<JoinResponse> b = joinAsync(joinRequest("job", 1, other, 40_000).build());
        int refused = firstToFinish(a, b);
        assertStatus(failure(refused == 0 ? a : b), Code.INVALID_ARGUMENT, "oneRoundElements=4096",
                "oneRoundElements=0", "every worker of a job must be configured alike");
        JoinResponse last = remember(stub().join(joinRequest("job", refused, refused == 0 ? other : p, 40_000).build()));
        assertThat(get(refused == 0 ? b : a).getJobNumber()).isEqualTo(last.getJobNumber());
    }

    @Test
    void joinTimesOutNamingTheMissingRankAndTheNameCanBeUsedAgain() {
        CompletableFuture<JoinResponse> r0 = joinAsync(joinRequest("job", 0, params(3), 40_000).setTimeoutMs(500).build());
        CompletableFuture<JoinResponse> r1 = joinAsync(joinRequest("job", 1, params(3), 40_000).setTimeoutMs(500).build());
        for (int rank = 0; rank < 2; rank++) {
            String description = assertStatus(failure(rank == 0 ? r0 : r1), Code.DEADLINE_EXCEEDED,
                    "job 'job': rank " + rank + " waited for the other ranks to join", "number of workers (3)");
            assertThat(missingRanks(description)).contains(2).doesNotContain(rank);
        }
        assertThat(service.pendingJoins()).as("ranks still waiting after their timeouts").isZero();
        assertThat(service.dataplane().job(0)).isEmpty();

        // The forming job is forgotten: the same name forms again, even with other parameters.
        List<JoinRequest> again = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            again.add(joinRequest("job", r, params(3, 2), 42_000).build());
        }
        List<JoinResponse> responses = joinAll(again);
        assertThat(service.dataplane().job(responses.get(0).getJobNumber()).orElseThrow().threads()).isEqualTo(2);
    }

    @Test
    void joiningARunningJobAgainIsFailedPrecondition() {
        int number = formJob("job", 3, 40_000);
        for (int rank = 0; rank < 3; rank++) {
            JoinRequest request = joinRequest("job", rank, 3);
            assertFails(() -> stub().join(request), Code.FAILED_PRECONDITION,
                    "job 'job' is already running as job number " + number + " with all 3 ranks");
        }
        assertThat(service.dataplane().job(number)).isPresent();
    }

    @Test
    void twoJobsWithDifferentNamesRunSideBySide() {
        List<JoinRequest> requests = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            requests.add(joinRequest("alpha", r, params(2), 40_000).build());
            requests.add(joinRequest("beta", r, params(2), 43_000).build());
        }
        List<JoinResponse> responses = joinAll(requests);
        int alpha = responses.get(0).getJobNumber();
        int beta = responses.get(1).getJobNumber();
        assertThat(responses.get(2).getJobNumber()).isEqualTo(alpha);
        assertThat(responses.get(3).getJobNumber()).isEqualTo(beta);
        assertThat(alpha).isNotEqualTo(beta);
        assertThat(service.dataplane().job(alpha).orElseThrow().name()).isEqualTo("alpha");
        assertThat(service.dataplane().job(beta).orElseThrow().name()).isEqualTo("beta");
        assertThat(stub().status(StatusRequest.getDefaultInstance()).getJobsList())
                .extracting(JobStatus::getJobName, JobStatus::getJobNumber)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("alpha", alpha),
                        org.assertj.core.groups.Tuple.tuple("beta", beta));
    }

    @Test
    void aJobWhoseEndpointBelongsToAnotherJobIsRefusedByTheSwitch() {
        int first = formJob("alpha", 1, 40_000);
        JoinRequest clash = joinRequest("beta", 0, params(1), 40_000).build();
        assertFails(() -> stub().join(clash), Code.FAILED_PRECONDITION, "the switch refused job 'beta'");
        assertThat(stub().status(StatusRequest.getDefaultInstance()).getJobsList())
                .extracting(JobStatus::getJobNumber).containsExactly(first);
        // The refused job is forgotten: it forms once it uses its own port.
        formJob("beta", 1, 44_000);
    }
}
