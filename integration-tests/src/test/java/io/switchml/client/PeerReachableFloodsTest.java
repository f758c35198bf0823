package io.switchml.client;

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
import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import io.switchml.controller.MetricsOptions;
import io.switchml.controller.MetricsScrape;
import io.switchml.controller.ProcessMemory;
import io.switchml.controller.RawCalls;
import io.switchml.controller.SwitchMetrics;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What anyone who reaches a default switch's ports can send, while a job runs: garbage to the health
 * service, more Watch streams than its cap, idle connections to the metrics endpoint, a join that
 * names the switch's own address and UDP port. Each is refused or bounded, the job's all-reduces stay
 * exact, and the scrapes are answered; RSS, threads and log bytes are printed.
 */
class PeerReachableFloodsTest {
    private static final int GARBAGE_MESSAGES = 2_000;
    private static final int WATCH_CAP = 100;
    private static final int WATCHES = 500;
    private static final int IDLE_CONNECTIONS = 300;
    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void floodsAtTheHealthServiceMetricsAndJoinsLeaveALiveJobExact() throws Exception {
        ControllerSecurity security = new ControllerSecurity().maxHealthWatches(WATCH_CAP);
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream err = System.err;
        try (AggregationService service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0),
                "127.0.0.1", 0, security);
             SwitchMetrics metrics = SwitchMetrics.start(service, new MetricsOptions("127.0.0.1", 0));
             LocalCluster live = LocalCluster.onSwitch(service, "live", 2, b -> b.elementsPerPacket(256))) {
            long rssBefore = ProcessMemory.rssKb();
            int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
            ExecutorService runner = Executors.newSingleThreadExecutor();
            ManagedChannel attacker = ManagedChannelBuilder.forAddress("127.0.0.1", service.controllerPort()).usePlaintext()
                    .build();
            List<Socket> idle = new ArrayList<>();
            List<ClientCall<HealthCheckRequest, HealthCheckResponse>> watches = new ArrayList<>();
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8)); // slf4j-simple writes to System.err
            try {
                Future<?> job = runner.submit(() -> {
                    for (int i = 0; i < 5; i++) {
                        AllReduceExactnessTest.checkFloatSum(live, 300 + i, 200_000, 256);
                    }
                });

                // Idle connections to the metrics endpoint, more than the JDK server's 16 that stopped every scrape.
                for (int i = 0; i < IDLE_CONNECTIONS; i++) {
                    idle.add(new Socket("127.0.0.1", metrics.port()));
                }
                // Garbage to the health service: refused, not a stack trace each.
                MethodDescriptor<byte[], byte[]> check = RawCalls.method(HealthGrpc.getCheckMethod().getFullMethodName(),
                        MethodDescriptor.MethodType.UNARY);
                Map<Status.Code, AtomicInteger> garbage = new ConcurrentHashMap<>();
                List<Future<byte[]>> calls = new ArrayList<>();
                for (int i = 0; i < GARBAGE_MESSAGES; i++) {
                    calls.add(ClientCalls.futureUnaryCall(attacker.newCall(check,
                            CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS)), new byte[] {0x0F, 1, 2, 3}));
                    if (calls.size() == 100) {
                        for (Future<byte[]> call : calls) {
                            garbage.computeIfAbsent(RawCalls.statusOf(call, 30_000).getCode(), c -> new AtomicInteger()).incrementAndGet();
                        }
                        calls.clear();
                    }
                }
                // Watch streams beyond the cap: refused at once.
                CountDownLatch answered = new CountDownLatch(WATCHES);
                Map<Status.Code, AtomicInteger> watched = new ConcurrentHashMap<>();
                for (int i = 0; i < WATCHES; i++) {
                    ClientCall<HealthCheckRequest, HealthCheckResponse> call = attacker.newCall(HealthGrpc.getWatchMethod(),
                            CallOptions.DEFAULT);
                    watches.add(call);
                    call.start(new ClientCall.Listener<>() {
                        private boolean first = true;

                        @Override
                        public void onMessage(HealthCheckResponse message) {
                            record(Status.Code.OK);
                        }

                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            record(status.getCode());
                        }

                        private synchronized void record(Status.Code code) {
                            if (first) {
                                first = false;
                                watched.computeIfAbsent(code, c -> new AtomicInteger()).incrementAndGet();
                                answered.countDown();
                            }
                        }
                    }, new Metadata());
                    call.request(1);
                    call.sendMessage(HealthCheckRequest.getDefaultInstance());
                    call.halfClose();
                }
                assertThat(answered.await(60, TimeUnit.SECONDS)).as("every Watch answered or refused").isTrue();
                // A join that names the switch's own address and UDP port: refused, no self-loop.
                int switchPort = service.dataplane().ports()[0];
                assertThatThrownBy(() -> ControllerGrpc.newBlockingStub(attacker).withDeadlineAfter(20, TimeUnit.SECONDS)
                        .join(JoinRequest.newBuilder().setJobName("looped").setRank(0).setAddress("127.0.0.1")
                                .addPorts(switchPort).setTimeoutMs(10_000).setParameters(JobParameters.newBuilder()
                                        .setNumWorkers(2).setElementsPerPacket(256).setSlotsPerThread(8).setThreads(1))
                                .build()))
                        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                            assertThat(e.getStatus().getDescription()).contains("is the switch's own");
                        });
                // The scrapes are answered all along.
                for (int i = 0; i < 5; i++) {
                    assertThat(MetricsScrape.scrape(metrics.port())).contains("switchml_jobs_installed 1");
                }

                job.get(90, TimeUnit.SECONDS);
                AllReduceExactnessTest.checkFloatSum(live, 400, 100_000, 256);

                System.setErr(err);
                String log = captured.toString(StandardCharsets.UTF_8);
                System.out.printf("floods during a live job: health garbage %s, watches %s, %d idle metrics connections;"
                                + " RSS %d -> %d kB, JVM threads %d -> %d, log %d bytes (%d lines, %d of them malformed"
                                + " requests)%n", garbage, watched, IDLE_CONNECTIONS, rssBefore, ProcessMemory.rssKb(), threadsBefore,
                        ManagementFactory.getThreadMXBean().getThreadCount(), log.getBytes(StandardCharsets.UTF_8).length,
                        log.lines().count(), log.lines().filter(l -> l.contains("malformed request")).count());
                assertThat(garbage.keySet()).containsOnly(Status.Code.INVALID_ARGUMENT);
                assertThat(watched.get(Status.Code.OK).get()).isEqualTo(WATCH_CAP);
                assertThat(watched.get(Status.Code.RESOURCE_EXHAUSTED).get()).isEqualTo(WATCHES - WATCH_CAP);
                assertThat(log).doesNotContain("\tat ");
                assertThat(log.lines().filter(l -> l.contains("malformed request from 127.0.0.1"))).hasSize(1);
                assertThat(HealthGrpc.newBlockingStub(attacker).withDeadlineAfter(20, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.getDefaultInstance()).getStatus())
                        .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
            } finally {
                System.setErr(err);
                watches.forEach(c -> c.cancel("test over", null));
                for (Socket socket : idle) {
                    socket.close();
                }
                runner.shutdownNow();
                attacker.shutdownNow();
                attacker.awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }
}
