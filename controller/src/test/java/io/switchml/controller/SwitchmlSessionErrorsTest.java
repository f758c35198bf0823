package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.switchml.controller.compat.proto.BarrierRequest;
import io.switchml.controller.compat.proto.BroadcastRequest;
import io.switchml.controller.compat.proto.PacketSize;
import io.switchml.controller.compat.proto.RdmaSessionRequest;
import io.switchml.controller.compat.proto.SessionGrpc;
import io.switchml.controller.compat.proto.SyncGrpc;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.controller.compat.proto.UdpSessionResponse;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.SwitchConfig;
import io.switchml.dataplane.WorkerEndpoint;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * SwitchML's session calls are answered at once, and those that cannot succeed with a clear
 * status; sync calls that cannot complete end, never hang. The services run with a short wait, on
 * a switch listening on every address.
 */
class SwitchmlSessionErrorsTest {
    private static final long WAIT_MS = 300;
    private static final int LOOPBACK_BITS = 0x7F00_0001;

    private AggregationSwitch dataplane;
    private ScheduledExecutorService timer;
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        dataplane = AggregationSwitch.start(new SwitchConfig().bindAddress("0.0.0.0").basePort(0));
        timer = Executors.newSingleThreadScheduledExecutor();
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addServices(SwitchmlServices.create(dataplane, new SwitchmlSessions(dataplane, JobLog.flushedBy(timer)), timer, WAIT_MS)).build().start();
        channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        timer.shutdownNow();
        dataplane.close();
    }

    @Test
    void aCompleteSessionIsAnsweredWithTheAddressTheWorkerReachedWhenTheSwitchListensEverywhere() {
        UdpSessionResponse response = udpSession(request(7, 0, 1));

        assertThat(response.getSessionId()).isEqualTo(7);
        assertThat(response.getIpv4()).isEqualTo(LOOPBACK_BITS);
        assertThat(response.getMac()).isEqualTo(SwitchmlSessionService.SWITCH_MAC);
        assertThat(dataplane.job(7)).hasValueSatisfying(job -> assertThat(job.roundNumbers()).isFalse());
    }

    @Test
    void aSessionGoesThroughTheAggregatorPoolAndIsRefusedWhenItDoesNotFit() {
        // Four jobs of the largest window fill the default pool of 65536 slots.
        for (int j = 0; j < 4; j++) {
            dataplane.installJob(new JobSpec(10 + j, "filler-" + j, PayloadSize.B128, ProtocolConstants.MAX_SLOTS, 1,
                    List.of(WorkerEndpoint.of(SwitchmlSessions.ipv4(0x0A00_0001 + j), 5000))));
        }

        assertFails(() -> udpSession(request(7, 0, 1)), Status.Code.RESOURCE_EXHAUSTED,
                "a SwitchML session needs all 16384 slots");
        assertThat(dataplane.job(7)).isEmpty();

        dataplane.removeJob(10); // its slots come back: the session fits again
        udpSession(request(7, 0, 1));
        assertThat(dataplane.slotPool().usedSlots()).isEqualTo(4 * ProtocolConstants.MAX_SLOTS);
    }

    @Test
    void everyRankIsAnsweredAtOnceAndTheLastOneInstallsTheSession() {
        UdpSessionResponse first = udpSession(request(1, 0, 2));

        assertThat(first.getIpv4()).isEqualTo(LOOPBACK_BITS);
        assertThat(dataplane.job(1)).as("rank 1 has not registered").isEmpty();

        udpSession(request(1, 1, 2));
        assertThat(dataplane.job(1)).hasValueSatisfying(job -> assertThat(job.endpoints()).hasSize(2));
    }

    @Test
    void ranksOfOneSessionMustAgreeOnWorkersAndPacketSize() {
        udpSession(request(1, 0, 2));

        assertFails(() -> udpSession(request(1, 1, 3)), Status.Code.INVALID_ARGUMENT, "num_workers 3");
        assertFails(() -> udpSession(requestBuilder(1, 1, 2).setPacketSize(PacketSize.MTU_1024).build()),
                Status.Code.INVALID_ARGUMENT, "configured alike");
        assertThat(dataplane.job(1)).isEmpty();
    }

    @Test
    void aRankOrAnAddressGivenTwiceAlreadyExists() {
        udpSession(request(1, 0, 3));
        udpSession(request(1, 1, 3));

        assertFails(() -> udpSession(requestBuilder(1, 1, 3).setIpv4(LOOPBACK_BITS + 5).build()), Status.Code.ALREADY_EXISTS,
                "rank 1 has already registered in session 1");
        assertFails(() -> udpSession(requestBuilder(1, 2, 3).setIpv4(LOOPBACK_BITS).build()), Status.Code.ALREADY_EXISTS,
                "already given by rank 0");
        udpSession(request(1, 1, 3)); // the same registration again changes nothing
        assertThat(dataplane.job(1)).isEmpty();
    }

    @Test
    void rankZeroRegisteringAgainRestartsItsSession() {
        udpSession(request(1, 0, 3));
        udpSession(request(1, 1, 3));

        udpSession(requestBuilder(1, 0, 3).setIpv4(LOOPBACK_BITS + 7).build());
        udpSession(request(1, 2, 3));
        assertThat(dataplane.job(1)).as("rank 1's registration was cleared with the restart").isEmpty();

        udpSession(request(1, 1, 3));
        assertThat(dataplane.job(1)).hasValueSatisfying(job -> assertThat(job.endpoints())
                .extracting(endpoint -> endpoint.address().getHostAddress())
                .containsExactly("127.0.0.8", "127.0.0.2", "127.0.0.3"));
    }

    @Test
    void aNewSessionReplacesAnEarlierOneThatHoldsOneOfItsAddresses() {
        udpSession(request(1, 0, 2));
        udpSession(request(1, 1, 2));
        assertThat(dataplane.job(1)).isPresent();

        udpSession(requestBuilder(2, 0, 2).setIpv4(LOOPBACK_BITS + 1).build()); // session 1's rank 1 address
        assertThat(dataplane.job(1)).as("session 1 replaced").isEmpty();
        assertFails(() -> udpSession(requestBuilder(1, 1, 2).setIpv4(LOOPBACK_BITS + 1).build()),
                Status.Code.FAILED_PRECONDITION, "which no rank 0 has started, or a newer session has replaced");
        udpSession(requestBuilder(2, 1, 2).setIpv4(LOOPBACK_BITS + 9).build());
        assertThat(dataplane.job(2)).isPresent();
    }

    @Test
    void aLateRankOfAnOlderSessionCannotTakeAnAddressFromANewerOne() {
        udpSession(request(1, 0, 2));
        udpSession(requestBuilder(2, 0, 2).setIpv4(LOOPBACK_BITS + 1).build());

        assertFails(() -> udpSession(request(1, 1, 2)), Status.Code.ALREADY_EXISTS, "which the newer session 2");
        udpSession(requestBuilder(2, 1, 2).setIpv4(LOOPBACK_BITS + 2).build());
        assertThat(dataplane.job(2)).isPresent();
        assertThat(dataplane.job(1)).isEmpty();
    }

    @Test
    void anAddressMatchedByAJobThatIsNoSessionIsRefusedAndTheJobStays() {
        dataplane.installJob(new JobSpec(40, "other", PayloadSize.B256, 8, 1,
                List.of(WorkerEndpoint.matchedByAddress(SwitchmlSessions.ipv4(LOOPBACK_BITS))), false));

        assertFails(() -> udpSession(request(7, 0, 1)), Status.Code.ALREADY_EXISTS,
                "job 'other' (job number 40) already matches by address alone");
        assertThat(dataplane.job(40)).isPresent();
        assertThat(dataplane.job(7)).isEmpty();
    }

    @Test
    void rdmaSessionsAreNotServedAndTheErrorNamesTheUdpFlavour() {
        assertFails(() -> SessionGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .rdmaSession(RdmaSessionRequest.newBuilder().setSessionId(1).setNumWorkers(1).build()),
                Status.Code.UNIMPLEMENTED, "UDP flavour");
    }

    @Test
    void malformedSessionRequestsAreInvalid() {
        assertFails(() -> udpSession(request(1, 2, 2)), Status.Code.INVALID_ARGUMENT, "rank 2 outside 0..1");
        assertFails(() -> udpSession(request(1, 0, 0)), Status.Code.INVALID_ARGUMENT, "num_workers 0");
        assertFails(() -> udpSession(requestBuilder(1, 0, 1).setIpv4(0).build()), Status.Code.INVALID_ARGUMENT,
                "ipv4 0.0.0.0 is in 0.0.0.0/8");
        assertFails(() -> udpSession(requestBuilder(1, 0, 1).setIpv4(0xFFFF_FFFF).build()), Status.Code.INVALID_ARGUMENT,
                "ipv4 255.255.255.255 is the broadcast address 255.255.255.255");
        assertFails(() -> udpSession(requestBuilder(1, 0, 1).setIpv4(0xE000_0001).build()), Status.Code.INVALID_ARGUMENT,
                "ipv4 224.0.0.1 is a multicast address");
        assertThat(dataplane.job(1)).as("no refused session was installed").isEmpty();
        assertFails(() -> udpSession(requestBuilder(1, 0, 1).setPacketSizeValue(9).build()), Status.Code.INVALID_ARGUMENT,
                "packet_size 9");
    }

    @Test
    void barrierWaitsAreBoundedAndConsistent() throws Exception {
        assertFails(() -> sync().barrier(barrier(2)), Status.Code.DEADLINE_EXCEEDED, "only 1 of 2 workers came");

        CompletableFuture<?> waiting = CompletableFuture.supplyAsync(() -> sync().barrier(barrier(2)));
        Thread.sleep(50);
        assertFails(() -> sync().barrier(barrier(3)), Status.Code.INVALID_ARGUMENT, "same num_workers");
        assertFails(() -> joinOf(waiting), Status.Code.DEADLINE_EXCEEDED, "only 1 of 2");
    }

    @Test
    void broadcastWaitsAreBoundedAndConsistent() throws Exception {
        assertFails(() -> sync().broadcast(broadcast(0, 2, 5)), Status.Code.INVALID_ARGUMENT, "root 5 outside 0..1");
        assertFails(() -> sync().broadcast(broadcast(0, 2, 1)), Status.Code.DEADLINE_EXCEEDED, "ranks [1] did not come");

        CompletableFuture<?> waiting = CompletableFuture.supplyAsync(() -> sync().broadcast(broadcast(0, 2, 0)));
        Thread.sleep(50);
        assertFails(() -> sync().broadcast(broadcast(1, 2, 1)), Status.Code.INVALID_ARGUMENT, "already in this broadcast use root 0");
        assertFails(() -> joinOf(waiting), Status.Code.DEADLINE_EXCEEDED, "did not come");
    }

    @Test
    void aFloodOfFreshSessionsIsCappedAndRefusedAtOnce() {
        // Each claims its own address (nothing checks it), so no session replaces another.
        for (int i = 0; i < SwitchmlSessions.MAX_FORMING_SESSIONS; i++) {
            udpSession(requestBuilder(1_000 + i, 0, 2).setIpv4(0x0A00_0000 + i).build());
        }
        assertFails(() -> udpSession(requestBuilder(5_000, 0, 2).setIpv4(0x0B00_0001).build()),
                Status.Code.RESOURCE_EXHAUSTED, "1024 SwitchML sessions whose ranks are still registering");
        // A session that completes is installed as before; the flood's sessions are not.
        assertThat(udpSession(requestBuilder(1_000, 1, 2).setIpv4(0x0C00_0001).build()).getSessionId()).isEqualTo(1_000);
    }

    private static UdpSessionRequest.Builder requestBuilder(long session, int rank, int workers) {
        return UdpSessionRequest.newBuilder().setSessionId(session).setRank(rank).setNumWorkers(workers)
                .setIpv4(LOOPBACK_BITS + rank).setPacketSize(PacketSize.MTU_256);
    }

    private static UdpSessionRequest request(long session, int rank, int workers) {
        return requestBuilder(session, rank, workers).build();
    }

    private static BarrierRequest barrier(int workers) {
        return BarrierRequest.newBuilder().setNumWorkers(workers).build();
    }

    private static BroadcastRequest broadcast(int rank, int workers, int root) {
        return BroadcastRequest.newBuilder().setValue(42).setRank(rank).setNumWorkers(workers).setRoot(root).build();
    }

    private UdpSessionResponse udpSession(UdpSessionRequest request) {
        return SessionGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).udpSession(request);
    }

    private SyncGrpc.SyncBlockingStub sync() {
        return SyncGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static <T> T joinOf(CompletableFuture<T> future) {
        try {
            return future.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw (RuntimeException) e.getCause();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static void assertFails(Supplier<?> call, Status.Code code, String message) {
        assertThatThrownBy(call::get).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(code);
            assertThat(e.getStatus().getDescription()).contains(message);
        });
    }
}
