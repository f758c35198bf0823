package io.switchml.client;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A peer floods the controller with 10 000 joins of fresh job names while a job runs: the controller
 * keeps at most its per-peer cap of them waiting and refuses the rest at once (RESOURCE_EXHAUSTED),
 * the running job's all-reduces stay exact, the heap the flood leaves reachable stays small, and the
 * waiting joins go away with the flooder.
 */
class JoinFloodTest {
    private static final int FLOOD = 10_000;
    private static final int PER_PEER = 100;

    /** The heap in use after a full collection: what is still reachable. */
    private static long liveHeap() {
        System.gc();
        return java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void tenThousandBogusJoinsDuringALiveJobLeaveItExactAndTheControllerBounded() throws Exception {
        ControllerSecurity security = new ControllerSecurity().maxPendingJoinsPerPeer(PER_PEER);
        try (AggregationService service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0),
                "127.0.0.1", 0, security);
             LocalCluster live = LocalCluster.onSwitch(service, "live", 2, b -> b.elementsPerPacket(256))) {
            ExecutorService runner = Executors.newSingleThreadExecutor();
            ManagedChannel flooder = ManagedChannelBuilder.forAddress("127.0.0.1", service.controllerPort()).usePlaintext()
                    .build();
            try {
                Future<?> job = runner.submit(() -> {
                    for (int i = 0; i < 5; i++) {
                        AllReduceExactnessTest.checkFloatSum(live, 100 + i, 200_000, 256);
                    }
                });
                long heapBefore = liveHeap();
                Map<Status.Code, AtomicInteger> refusals = new ConcurrentHashMap<>();
                CountDownLatch answered = new CountDownLatch(FLOOD - PER_PEER);
                ControllerGrpc.ControllerStub stub = ControllerGrpc.newStub(flooder);
                JobParameters parameters = JobParameters.newBuilder().setNumWorkers(2).setElementsPerPacket(256)
                        .setSlotsPerThread(8).setThreads(1).build();
                for (int i = 0; i < FLOOD; i++) {
                    stub.join(JoinRequest.newBuilder().setJobName("bogus-" + i).setRank(0).setParameters(parameters)
                            .setAddress("127.0.0.1").addPorts(20_000 + i % 40_000).setTimeoutMs(60_000).build(),
                            new StreamObserver<>() {
                                @Override
                                public void onNext(JoinResponse value) {
                                    refusals.computeIfAbsent(Status.Code.OK, c -> new AtomicInteger()).incrementAndGet();
                                }

                                @Override
                                public void onError(Throwable t) {
                                    refusals.computeIfAbsent(Status.fromThrowable(t).getCode(), c -> new AtomicInteger())
                                            .incrementAndGet();
                                    answered.countDown();
                                }

                                @Override
                                public void onCompleted() {
                                }
                            });
                }
                assertThat(answered.await(60, TimeUnit.SECONDS)).as("the joins beyond the cap refused at once").isTrue();
                assertThat(refusals.keySet()).containsOnly(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(refusals.get(Status.Code.RESOURCE_EXHAUSTED).get()).isEqualTo(FLOOD - PER_PEER);
                assertThat(service.pendingJoins()).as("waiting joins held by the controller").isEqualTo(PER_PEER);
                // Held without the caps, the 10 000 joins and their calls take about 56 MB (measured); with them
                // about 6 MB, the running job's tensors included.
                assertThat(liveHeap() - heapBefore).as("heap reachable after the flood, over before").isLessThan(32L << 20);

                job.get(60, TimeUnit.SECONDS);
                AllReduceExactnessTest.checkFloatSum(live, 200, 100_000, 256);
            } finally {
                runner.shutdownNow();
                flooder.shutdownNow();
                flooder.awaitTermination(5, TimeUnit.SECONDS);
            }
            // The flooder's connection is gone: its waiting joins are withdrawn.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (service.pendingJoins() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(service.pendingJoins()).as("waiting joins 10 s after the flooder left").isZero();
        }
    }
}
