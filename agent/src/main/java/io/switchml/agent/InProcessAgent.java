package io.switchml.agent;

import io.switchml.launch.WorkerConnection;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A host's agent run by one of the host's JVM ranks, in its own process ({@link HostAggregation}): no process more on
 * the host's cores. It ends as {@code switchml agent} does, once every local rank said BYE (it leaves the job then).
 * When a local rank dies it ends without leaving the job, like the agent's own process; the rank that runs it then
 * fails with the reason the agent told it, and its process's end tells the controller.
 */
final class InProcessAgent implements AutoCloseable {
    /** Beyond the agent's idle timeout, how long closing waits for it to end. */
    private static final Duration MARGIN = Duration.ofMinutes(1);

    private final Agent agent;
    private final Duration lifetime;
    private final CompletableFuture<Integer> outcome = new CompletableFuture<>();

    private InProcessAgent(AgentOptions options) {
        this.agent = new Agent(options, System.err);
        this.lifetime = options.idleTimeout().plus(MARGIN);
    }

    /** Starts the agent on a thread of its own; it listens on its socket at once. */
    static InProcessAgent start(AgentOptions options) {
        InProcessAgent running = new InProcessAgent(options);
        AgentLines.daemon(() -> {
            try {
                running.outcome.complete(running.agent.run());
            } catch (RuntimeException | Error e) {
                running.outcome.completeExceptionally(e);
            }
        }, "switchml-host-agent-" + options.rank()).start();
        return running;
    }

    /** The job's connection, once the agent joined it (every local rank has its READY by then). */
    WorkerConnection joined() {
        return agent.joined();
    }

    /**
     * Waits for the agent to have left the job: the host's other ranks still use it until they say BYE, so this process
     * stays as long; the agent's idle timeout bounds the wait (it ends by itself when its ranks fall silent).
     */
    @Override
    public void close() throws ExecutionException, InterruptedException, TimeoutException {
        int code = outcome.get(lifetime.toMillis(), TimeUnit.MILLISECONDS);
        if (code != 0) {
            throw new IllegalStateException("the host's agent ended with code " + code + " (its reason is on the log)");
        }
    }
}
