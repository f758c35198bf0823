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
 * SwitchML's session and sync calls that cannot succeed end with a clear status, never hang. The
 * services run with a short wait, on a switch listening on every address.
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
                .addServices(SwitchmlServices.create(dataplane, timer, WAIT_MS)).build().start();
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
    void aRankAloneRunsOutOfTime() {
        assertFails(() -> udpSession(request(1, 0, 2)), Status.Code.DEADLINE_EXCEEDED,
                "ranks [1] did not call UdpSession");
    }

    @Test
    void ranksOfOneSessionMustAgreeOnWorkersAndPacketSize() throws Exception {
        CompletableFuture<UdpSessionResponse> first = CompletableFuture.supplyAsync(() -> udpSession(request(1, 0, 2)));
        Thread.sleep(50);

        assertFails(() -> udpSession(request(1, 1, 3)), Status.Code.INVALID_ARGUMENT, "num_workers 3");
        assertFails(() -> udpSession(requestBuilder(1, 1, 2).setPacketSize(PacketSize.MTU_1024).build()),
                Status.Code.INVALID_ARGUMENT, "configured alike");
        assertFails(() -> joinOf(first), Status.Code.DEADLINE_EXCEEDED, "did not call");
    }

    @Test
    void aRankOrAnAddressGivenTwiceAlreadyExists() throws Exception {
        CompletableFuture<UdpSessionResponse> first = CompletableFuture.supplyAsync(() -> udpSession(request(1, 0, 3)));
        Thread.sleep(50);

        assertFails(() -> udpSession(requestBuilder(1, 0, 3).setIpv4(LOOPBACK_BITS + 5).build()), Status.Code.ALREADY_EXISTS,
                "rank 0 has already joined session 1");
        assertFails(() -> udpSession(requestBuilder(1, 2, 3).setIpv4(LOOPBACK_BITS).build()), Status.Code.ALREADY_EXISTS,
                "already given by rank 0");
        assertFails(() -> joinOf(first), Status.Code.DEADLINE_EXCEEDED, "did not call");
    }

    @Test
    void malformedSessionRequestsAreInvalid() {
        assertFails(() -> udpSession(request(1, 2, 2)), Status.Code.INVALID_ARGUMENT, "rank 2 outside 0..1");
        assertFails(() -> udpSession(request(1, 0, 0)), Status.Code.INVALID_ARGUMENT, "num_workers 0");
        assertFails(() -> udpSession(requestBuilder(1, 0, 1).setIpv4(0).build()), Status.Code.INVALID_ARGUMENT, "ipv4");
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
