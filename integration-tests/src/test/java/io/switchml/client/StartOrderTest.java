package io.switchml.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Start-up order does not matter: workers started before their switch wait for it (within their join
 * timeout) and form the job once it listens; ranks waiting to join when the switch restarts join the
 * restarted one. Exact results either way.
 */
class StartOrderTest {
    private static final int WORKERS = 2;
    private static final int LENGTH = 50_000;

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void workersStartedBeforeTheSwitchWaitForIt() throws Exception {
        int port = freePort();
        List<CompletableFuture<SwitchMLContext>> joining = connectAll(port, "early");
        awaitRetrying(joining);
        try (AggregationService service = startSwitch(port);
             Contexts contexts = new Contexts(joining)) {
            assertThat(service.controllerPort()).isEqualTo(port);
            contexts.assertExactSum(7);
        }
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void ranksWaitingToJoinJoinTheRestartedSwitch() throws Exception {
        int port = freePort();
        AggregationService first = startSwitch(port);
        CompletableFuture<SwitchMLContext> rank0 = connect(port, "restart", 0);
        awaitPendingJoins(first, 1);
        first.close(); // rank 0 waits to join; its switch goes before rank 1 comes
        try (AggregationService second = startSwitch(port)) {
            CompletableFuture<SwitchMLContext> rank1 = connect(port, "restart", 1);
            try (Contexts contexts = new Contexts(List.of(rank0, rank1))) {
                contexts.assertExactSum(11);
            }
        }
    }

    private static AggregationService startSwitch(int controllerPort) {
        return AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", controllerPort);
    }

    private static List<CompletableFuture<SwitchMLContext>> connectAll(int port, String job) {
        List<CompletableFuture<SwitchMLContext>> all = new ArrayList<>();
        for (int r = 0; r < WORKERS; r++) {
            all.add(connect(port, job, r));
        }
        return all;
    }

    private static CompletableFuture<SwitchMLContext> connect(int port, String job, int rank) {
        SwitchMLConfig config = SwitchMLConfig.builder().controller("127.0.0.1:" + port).job(job).rank(rank)
                .workers(WORKERS).joinTimeout(Duration.ofSeconds(40))
                .elementsPerPacket(TestDefaults.ELEMENTS_PER_PACKET).slotsPerThread(TestDefaults.SLOTS_PER_THREAD).build();
        return CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(config));
    }

    /** The joins have met a closed port at least once and are still trying (not failed). */
    private static void awaitRetrying(List<CompletableFuture<SwitchMLContext>> joining) throws InterruptedException {
        Thread.sleep(1_000);
        assertThat(joining).as("still waiting for the switch").allSatisfy(f -> assertThat(f).isNotDone());
    }

    private static void awaitPendingJoins(AggregationService service, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (service.pendingJoins() < count) {
            assertThat(System.nanoTime()).as("%d rank(s) waiting to join", count).isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** The joined contexts, closed at the end. */
    private static final class Contexts implements AutoCloseable {
        private final List<SwitchMLContext> contexts = new ArrayList<>();

        Contexts(List<CompletableFuture<SwitchMLContext>> joining) throws Exception {
            for (CompletableFuture<SwitchMLContext> f : joining) {
                contexts.add(f.get(60, TimeUnit.SECONDS));
            }
        }

        void assertExactSum(long seed) throws Exception {
            float[][] inputs = TestTensors.floatsByRank(seed, WORKERS, LENGTH);
            List<CompletableFuture<float[]>> results = new ArrayList<>();
            for (int r = 0; r < WORKERS; r++) {
                int rank = r;
                results.add(CompletableFuture.supplyAsync(() -> {
                    float[] out = new float[LENGTH];
                    contexts.get(rank).allReduce(inputs[rank], out, ReduceOp.SUM);
                    return out;
                }));
            }
            float[] expected = ReferenceAllReduce.floats(inputs, TestDefaults.ELEMENTS_PER_PACKET, ReduceOp.SUM);
            for (CompletableFuture<float[]> result : results) {
                assertThat(result.get(60, TimeUnit.SECONDS)).isEqualTo(expected);
            }
        }

        @Override
        public void close() {
            contexts.forEach(SwitchMLContext::close);
        }
    }
}
