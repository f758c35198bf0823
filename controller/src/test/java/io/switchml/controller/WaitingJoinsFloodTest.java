package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.Status.Code;
import io.grpc.stub.StreamObserver;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A flood of joins that wait (each for a job nobody else joins) neither grows the controller's threads
 * nor holds its caps for longer than {@link ControllerSecurity#maxJoinWaitMs()}, and a legitimate job
 * forms meanwhile.
 */
class WaitingJoinsFloodTest extends ControllerTestSupport {
    private static final int FLOOD = 1_000;
    /**
     * Long enough that the whole flood is pending at once even on a loaded machine (with 3 s, the first joins expired
     * before a loaded CI machine had sent the last, and the count never reached the flood), far below the hour asked.
     */
    private static final int MAX_JOIN_WAIT_MS = 15_000;

    @Override
    ControllerSecurity security() {
        return new ControllerSecurity().maxJoinWaitMs(MAX_JOIN_WAIT_MS);
    }

    @Test
    void waitingJoinsHoldNoThreadsAndExpireAtTheSwitchsLimit() throws InterruptedException {
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        // A direct-executor client: the flood's own JVM threads do not grow either, so the count is the switch's.
        ManagedChannel flooder = ManagedChannelBuilder.forAddress(LOOPBACK, service.controllerPort()).usePlaintext()
                .directExecutor().build();
        CountDownLatch ended = new CountDownLatch(FLOOD);
        AtomicInteger expired = new AtomicInteger();
        try {
            ControllerGrpc.ControllerStub stub = ControllerGrpc.newStub(flooder);
            for (int i = 0; i < FLOOD; i++) {
                // Each asks to wait an hour for a second rank that never comes.
                JoinRequest join = joinRequest("flood-" + i, 0, params(2), 41_000).setTimeoutMs(3_600_000).build();
                stub.join(join, new StreamObserver<>() {
                    @Override
                    public void onNext(JoinResponse value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                        if (Status.fromThrowable(t).getCode() == Code.DEADLINE_EXCEEDED) {
                            expired.incrementAndGet();
                        }
                        ended.countDown();
                    }

                    @Override
                    public void onCompleted() {
                        ended.countDown();
                    }
                });
            }
            awaitPendingJoins(FLOOD);
            int threadsDuring = ManagementFactory.getThreadMXBean().getThreadCount();
            long callThreads = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("switchml-controller-call")).count();
            System.out.printf("join flood: %d waiting joins, JVM threads %d before, %d during (controller call threads %d)%n",
                    FLOOD, threadsBefore, threadsDuring, callThreads);
            assertThat(callThreads).isLessThanOrEqualTo(ControllerSecurity.DEFAULT_CALL_THREADS);
            assertThat(threadsDuring - threadsBefore).as("threads added by %d waiting joins", FLOOD)
                    .isLessThan(ControllerSecurity.DEFAULT_CALL_THREADS + 16);

            // A legitimate job forms while the flood waits.
            long formStart = System.nanoTime();
            List<JoinResponse> formed = joinAll(List.of(joinRequest("real", 0, 2), joinRequest("real", 1, 2)));
            long formMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - formStart);
            assertThat(formed).extracting(JoinResponse::getJobNumber).containsOnly(formed.get(0).getJobNumber());
            System.gc();
            Runtime heap = Runtime.getRuntime();
            System.out.printf("join flood: a legitimate job of 2 ranks formed in %d ms meanwhile; heap in use after GC %d MiB%n",
                    formMs, (heap.totalMemory() - heap.freeMemory()) >> 20);

            // Every flooding join ends at the switch's limit, not after the hour it asked for.
            assertThat(ended.await(CLIENT_DEADLINE_MS + MAX_JOIN_WAIT_MS, TimeUnit.MILLISECONDS))
                    .as("every waiting join ended").isTrue();
            assertThat(expired.get()).isEqualTo(FLOOD);
            assertThat(service.pendingJoins()).isZero();
        } finally {
            flooder.shutdownNow();
        }
    }
}
