package io.switchml.jmh;

import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** A switch with its controller on loopback (ephemeral ports) and n joined worker contexts, all in this JVM. */
public final class EmbeddedCluster implements AutoCloseable {
    private final AggregationService service;
    private final List<SwitchMLContext> contexts = new ArrayList<>();

    /** Starts the switch and joins {@code workers} workers with the default settings; returns once all joined. */
    public EmbeddedCluster(int workers) {
        service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0).portCount(1),
                "127.0.0.1", 0);
        // connect() returns only when every rank has joined, so the ranks must join concurrently.
        ExecutorService joiners = Executors.newFixedThreadPool(workers);
        try {
            List<CompletableFuture<SwitchMLContext>> joining = new ArrayList<>();
            for (int rank = 0; rank < workers; rank++) {
                SwitchMLConfig config = SwitchMLConfig.builder()
                        .controller("127.0.0.1:" + service.controllerPort())
                        .job("jmh").workers(workers).rank(rank)
                        .joinTimeout(Duration.ofSeconds(30))
                        .build();
                joining.add(CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(config), joiners));
            }
            for (CompletableFuture<SwitchMLContext> joined : joining) {
                contexts.add(joined.join());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        } finally {
            joiners.shutdown();
        }
    }

    public SwitchMLContext worker(int rank) {
        return contexts.get(rank);
    }

    public int workers() {
        return contexts.size();
    }

    @Override
    public void close() {
        contexts.forEach(SwitchMLContext::close);
        service.close();
    }
}
