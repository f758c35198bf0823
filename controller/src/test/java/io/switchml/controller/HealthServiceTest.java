package io.switchml.controller;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.ClientCalls;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.JoinResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The standard gRPC health service, which answers every caller without credentials: garbage sent
 * to it is refused and logged once per peer per minute (not a stack trace per message), and its
 * Watch streams are capped (RESOURCE_EXHAUSTED beyond {@link ControllerSecurity#maxHealthWatches}),
 * while a legitimate job forms.
 */
class HealthServiceTest extends ControllerTestSupport {
    private static final int MESSAGES = 5_000;
    private static final int WATCH_CAP = 200;
    private static final int WATCH_FLOOD = 1_000;
    @Override
    ControllerSecurity security() {
        return new ControllerSecurity().maxHealthWatches(WATCH_CAP);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void garbageToTheHealthServiceIsRefusedAndLoggedOncePerPeer() throws Exception {
        MethodDescriptor<byte[], byte[]> check = raw(HealthGrpc.getCheckMethod().getFullMethodName(),
                MethodDescriptor.MethodType.UNARY);
        MethodDescriptor<byte[], byte[]> watch = raw(HealthGrpc.getWatchMethod().getFullMethodName(),
                MethodDescriptor.MethodType.SERVER_STREAMING);
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream err = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8)); // slf4j-simple writes to System.err
        List<Status> answers = new ArrayList<>();
        try {
            List<Future<byte[]>> calls = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                if (i % 2 == 0) {
                    calls.add(ClientCalls.futureUnaryCall(channel.newCall(check,
                            CallOptions.DEFAULT.withDeadlineAfter(CLIENT_DEADLINE_MS, TimeUnit.MILLISECONDS)), RawCalls.GARBAGE[i % 3]));
                } else {
                    answers.add(watchOnce(watch, RawCalls.GARBAGE[i % 3]));
                }
                if (calls.size() == 100 || i == MESSAGES - 1) {
                    for (Future<byte[]> call : calls) {
                        answers.add(RawCalls.statusOf(call, CLIENT_DEADLINE_MS));
                    }
                    calls.clear();
                }
            }
        } finally {
            System.setErr(err);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        err.print(log);
        System.out.printf("health garbage: %d messages, %d bytes of log, %d lines; RSS %d kB, JVM threads %d%n",
                MESSAGES, log.getBytes(StandardCharsets.UTF_8).length, log.lines().count(), ProcessMemory.rssKb(),
                ManagementFactory.getThreadMXBean().getThreadCount());

        assertThat(answers).hasSize(MESSAGES).allSatisfy(s -> {
            assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(s.getDescription()).startsWith("malformed request: the message is not a ");
        });
        assertThat(log.lines().filter(l -> l.contains("malformed request from 127.0.0.1 to grpc.health.v1.Health/")))
                .hasSize(1);
        assertThat(log).doesNotContain("\tat ").hasSizeLessThan(4096);

        // Still healthy, and a legitimate job forms.
        assertThat(health().check(HealthCheckRequest.newBuilder().setService(ControllerGrpc.SERVICE_NAME).build())
                .getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
        List<JoinResponse> formed = joinAll(List.of(joinRequest("after-health-garbage", 0, 2),
                joinRequest("after-health-garbage", 1, 2)));
        assertThat(service.dataplane().job(formed.get(0).getJobNumber())).isPresent();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void watchStreamsBeyondTheCapAreRefusedAndAPlaceFreesWhenOneEnds() throws Exception {
        long rssBefore = ProcessMemory.rssKb();
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        ManagedChannel flooder = ManagedChannelBuilder.forAddress(LOOPBACK, service.controllerPort()).usePlaintext().build();
        CountDownLatch answered = new CountDownLatch(WATCH_FLOOD);
        Map<Status.Code, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        List<ClientCall<HealthCheckRequest, HealthCheckResponse>> streams = new ArrayList<>();
        try {
            for (int i = 0; i < WATCH_FLOOD; i++) {
                ClientCall<HealthCheckRequest, HealthCheckResponse> call = flooder.newCall(HealthGrpc.getWatchMethod(),
                        CallOptions.DEFAULT);
                streams.add(call);
                call.start(new ClientCall.Listener<>() {
                    private boolean first = true;

                    @Override
                    public void onMessage(HealthCheckResponse message) {
                        if (first) {
                            first = false;
                            outcomes.computeIfAbsent(Status.Code.OK, c -> new AtomicInteger()).incrementAndGet();
                            answered.countDown();
                        }
                    }

                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        if (first) {
                            first = false;
                            outcomes.computeIfAbsent(status.getCode(), c -> new AtomicInteger()).incrementAndGet();
                            answered.countDown();
                        }
                    }
                }, new Metadata());
                call.request(2);
                call.sendMessage(HealthCheckRequest.newBuilder().setService(ControllerGrpc.SERVICE_NAME).build());
                call.halfClose();
            }
            assertThat(answered.await(60, TimeUnit.SECONDS)).as("every Watch answered or refused").isTrue();
            long rssDuring = ProcessMemory.rssKb();
            int threadsDuring = ManagementFactory.getThreadMXBean().getThreadCount();
            System.out.printf("health watch flood: %d streams asked, %s; RSS %d -> %d kB, JVM threads %d -> %d%n",
                    WATCH_FLOOD, outcomes, rssBefore, rssDuring, threadsBefore, threadsDuring);
            assertThat(outcomes.keySet()).containsOnly(Status.Code.OK, Status.Code.RESOURCE_EXHAUSTED);
            assertThat(outcomes.get(Status.Code.OK).get()).as("streams served").isEqualTo(WATCH_CAP);
            assertThat(outcomes.get(Status.Code.RESOURCE_EXHAUSTED).get()).isEqualTo(WATCH_FLOOD - WATCH_CAP);

            // Check is unary: served whatever the streams; a legitimate job forms meanwhile.
            assertThat(health().check(HealthCheckRequest.newBuilder().build()).getStatus())
                    .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
            List<JoinResponse> formed = joinAll(List.of(joinRequest("beside-the-watches", 0, 2),
                    joinRequest("beside-the-watches", 1, 2)));
            assertThat(service.dataplane().job(formed.get(0).getJobNumber())).isPresent();
            StatusRuntimeException refused = firstWatchError();
            assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(refused.getStatus().getDescription()).contains("maxHealthWatches");
        } finally {
            streams.forEach(c -> c.cancel("test over", null));
            flooder.shutdownNow();
            flooder.awaitTermination(10, TimeUnit.SECONDS);
        }
        // The flooder is gone: its streams' places are free again.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        StatusRuntimeException last = null;
        while (System.nanoTime() < deadline) {
            try {
                HealthCheckResponse first = health().withDeadlineAfter(10, TimeUnit.SECONDS)
                        .watch(HealthCheckRequest.newBuilder().build()).next();
                assertThat(first.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
                return;
            } catch (StatusRuntimeException e) {
                last = e;
                Thread.sleep(20);
            }
        }
        throw new AssertionError("no Watch stream served 20 s after the flooder left", last);
    }

    private HealthGrpc.HealthBlockingStub health() {
        return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(CLIENT_DEADLINE_MS, TimeUnit.MILLISECONDS);
    }

    /** The first answer of a Watch that must be refused: its error. */
    private StatusRuntimeException firstWatchError() {
        try {
            health().watch(HealthCheckRequest.newBuilder().build()).next();
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError("a Watch beyond the cap was served");
    }

    /** A Watch of raw bytes: how it ended (a garbage request ends it at once). */
    private Status watchOnce(MethodDescriptor<byte[], byte[]> watch, byte[] request) {
        try {
            ClientCalls.blockingServerStreamingCall(channel, watch,
                    CallOptions.DEFAULT.withDeadlineAfter(CLIENT_DEADLINE_MS, TimeUnit.MILLISECONDS), request).hasNext();
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }

    private static MethodDescriptor<byte[], byte[]> raw(String name, MethodDescriptor.MethodType type) {
        return RawCalls.method(name, type);
    }
}
