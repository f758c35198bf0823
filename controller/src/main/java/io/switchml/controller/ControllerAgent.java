package io.switchml.controller;

import io.grpc.Status;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The one thread that owns the controller's job tables (docs/ARCHITECTURE.md section 5), as Aeron's
 * conductor owns its own: the registry's calls, the expiry timers, the ends of watch streams and the
 * spine's answers each run on it as a command, one at a time in arrival order, so no lock is shared
 * between {@link JobRegistry}, {@link JobFormation}, {@link JobLiveness}, {@link JobMeetings} and
 * {@link SpineLink}. Commands never wait (a rendezvous parks its reply), so a caller waits for its
 * command only as long as the commands ahead of it take. A command that calls back into the agent
 * (a watch's end, fired by the agent's own error to it) runs at once, where it is.
 */
final class ControllerAgent implements AutoCloseable {
    /** Far beyond what commands take: a caller that waits this long found the agent stuck, and says so. */
    static final Duration CALL_LIMIT = Duration.ofSeconds(30);

    private final ExecutorService executor;
    private volatile Thread thread;

    ControllerAgent() {
        executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "switchml-controller-agent");
            t.setDaemon(true);
            thread = t;
            return t;
        });
    }

    /** Runs {@code command} on the agent and returns its result (or throws what it threw). */
    <T> T call(Supplier<T> command) {
        if (Thread.currentThread() == thread) {
            return command.get();
        }
        Future<T> result;
        try {
            result = executor.submit(command::get);
        } catch (RejectedExecutionException e) {
            throw new ControlException(Status.UNAVAILABLE, "the controller is shutting down");
        }
        try {
            return result.get(CALL_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            result.cancel(false);
            throw new ControlException(Status.INTERNAL, "the controller's agent did not run a command within " + CALL_LIMIT
                    + ": it is stuck; a thread dump of switchml-controller-agent shows where");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ControlException(Status.CANCELLED, "interrupted while waiting for the controller's agent");
        }
    }

    /** Runs {@code command} on the agent and returns once it ran. */
    void run(Runnable command) {
        call(() -> {
            command.run();
            return null;
        });
    }

    /**
     * Runs a callback's command (an expiry timer's, a watch stream's end, the spine's answer) on the agent and
     * returns once it ran; once the agent is closed it does nothing: the controller is going away, and with it
     * what the callback would change.
     */
    void callback(Runnable command) {
        if (executor.isShutdown()) {
            return;
        }
        try {
            run(command);
        } catch (ControlException e) {
            if (!executor.isShutdown()) {
                throw e;
            }
        }
    }

    /** Commands already queued still run; later ones are refused (UNAVAILABLE), callbacks dropped. */
    @Override
    public void close() {
        executor.shutdown();
    }
}
