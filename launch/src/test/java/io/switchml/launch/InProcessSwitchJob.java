package io.switchml.launch;

import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * An embedded switch and n joined workers of one job in this JVM, each on its own thread: the framework modules' tests
 * (djl, tensorflow) run their ranks on it, each rank with its own model, as separate processes would.
 */
public final class InProcessSwitchJob implements AutoCloseable {
    /** What one rank runs with its context. */
    public interface Body<T> {
        T run(SwitchMLContext context) throws Exception;
    }

    private final AggregationService service;
    private final List<SwitchMLContext> contexts = new ArrayList<>();
    private final ExecutorService pool;

    public InProcessSwitchJob(int workers) {
        this(workers, Duration.ofSeconds(30));
    }

    /** @param operationTimeout how long an all-reduce may wait: short where a test makes the ranks disagree */
    public InProcessSwitchJob(int workers, Duration operationTimeout) {
        service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0);
        pool = Executors.newFixedThreadPool(workers);
        String job = "in-process-" + System.nanoTime();
        // connect() returns only once every rank has joined, so the ranks join at once.
        List<CompletableFuture<SwitchMLContext>> joining = new ArrayList<>();
        for (int r = 0; r < workers; r++) {
            SwitchMLConfig config = SwitchMLConfig.builder().controller("127.0.0.1:" + service.controllerPort()).job(job)
                    .rank(r).workers(workers).joinTimeout(Duration.ofSeconds(30)).operationTimeout(operationTimeout)
                    .build();
            joining.add(CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(config), pool));
        }
        try {
            joining.forEach(f -> contexts.add(f.join()));
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Runs {@code body} on every worker at once; the results in rank order, or the first failure. */
    public <T> List<T> run(Body<T> body) throws Exception {
        List<CompletableFuture<T>> futures = new ArrayList<>();
        for (SwitchMLContext c : contexts) {
            futures.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return body.run(c);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }, pool));
        }
        List<T> results = new ArrayList<>();
        for (CompletableFuture<T> f : futures) {
            results.add(f.get(120, TimeUnit.SECONDS));
        }
        return results;
    }

    /** The packet size the job runs with: the unit of the switch's block scaling. */
    public int elementsPerPacket() {
        return contexts.get(0).config().elementsPerPacket();
    }

    @Override
    public void close() {
        pool.shutdownNow();
        contexts.forEach(SwitchMLContext::close);
        service.close();
    }
}
