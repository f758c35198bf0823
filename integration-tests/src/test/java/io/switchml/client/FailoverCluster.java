package io.switchml.client;

import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

/**
 * Several embedded switches on loopback, and n worker contexts in this JVM that list their
 * controllers in order (the first active, the others standbys).
 */
final class FailoverCluster implements AutoCloseable {
    final List<AggregationService> switches = new ArrayList<>();
    final List<SwitchMLContext> contexts = new ArrayList<>();

    /**
     * @param switches  switches to start
     * @param deadPorts controller addresses listed after them where nothing listens
     */
    FailoverCluster(int workers, int switchCount, List<String> deadPorts, UnaryOperator<SwitchMLConfig.Builder> configure) {
        try {
            List<String> controllers = new ArrayList<>();
            for (int s = 0; s < switchCount; s++) {
                AggregationService service = AggregationService.start(
                        new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0);
                switches.add(service);
                controllers.add("127.0.0.1:" + service.controllerPort());
            }
            controllers.addAll(deadPorts);
            String job = "failover-" + System.nanoTime();
            List<CompletableFuture<SwitchMLContext>> joining = new ArrayList<>();
            for (int r = 0; r < workers; r++) {
                SwitchMLConfig config = configure.apply(SwitchMLConfig.builder()
                        .controllers(String.join(",", controllers)).job(job).rank(r).workers(workers)
                        .joinTimeout(Duration.ofSeconds(30)).operationTimeout(Duration.ofSeconds(60))
                        .elementsPerPacket(TestDefaults.ELEMENTS_PER_PACKET).slotsPerThread(TestDefaults.SLOTS_PER_THREAD)).build();
                joining.add(CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(config)));
            }
            for (CompletableFuture<SwitchMLContext> f : joining) {
                contexts.add(f.join());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Waits (at most 30 s) until rank 0 has received {@code results} results, then stops the active switch. */
    void killActiveSwitchAfter(long results) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (contexts.get(0).statistics().snapshot().packetsReceived() < results) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no progress to wait for: rank 0 received "
                        + contexts.get(0).statistics().snapshot().packetsReceived() + " results in 30 s");
            }
            Thread.sleep(1);
        }
        switches.get(0).close();
    }

    @Override
    public void close() {
        for (SwitchMLContext c : contexts) {
            c.close();
        }
        for (AggregationService s : switches) {
            s.close();
        }
    }
}
