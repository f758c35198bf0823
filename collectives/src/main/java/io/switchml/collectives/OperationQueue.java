package io.switchml.collectives;

import io.switchml.api.SwitchMLException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Supplier;

/**
 * Runs one instance's operations one at a time, in submission order, on its own thread (the only
 * thread that touches the instance's links). After the first failure every later operation fails at
 * once: the streams to the peers are out of step, so the instance cannot be trusted any more.
 */
final class OperationQueue {
    private static final Task<?> STOP = new Task<>(null, null);

    private final String owner;
    private final Runnable onFailure;
    private final BlockingQueue<Task<?>> tasks = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile RuntimeException firstFailure;
    private volatile boolean closed;

    private record Task<T>(CompletableFuture<T> future, Supplier<T> body) {
    }

    /**
     * @param owner     how errors name the instance, e.g. "rank 1 (ring)"
     * @param onFailure runs on the queue's thread after the first failure (to close the links, so
     *                  that the peers fail at once instead of at their timeout)
     */
    OperationQueue(String owner, String threadName, Runnable onFailure) {
        this.owner = owner;
        this.onFailure = onFailure;
        this.thread = new Thread(this::run, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    <T> CompletableFuture<T> submit(Supplier<T> body) {
        CompletableFuture<T> future = new CompletableFuture<>();
        if (closed) {
            future.completeExceptionally(closedError());
            return future;
        }
        tasks.add(new Task<>(future, body));
        if (closed) {
            failQueued(); // lost a race with close(): do not leave it pending
        }
        return future;
    }

    /** Waits for an operation and rethrows its failure as the unchecked exception it was. */
    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchMLException("interrupted while waiting for a collective operation", e);
        } catch (CancellationException e) {
            throw new SwitchMLException("the collective operation was cancelled", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            throw new SwitchMLException(String.valueOf(cause.getMessage()), cause);
        }
    }

    /**
     * Fails every queued operation, stops the running one with {@code abortRunning} (which makes its
     * waits throw) and waits for the thread to end.
     */
    void close(Runnable abortRunning) {
        closed = true;
        failQueued();
        abortRunning.run();
        tasks.add(STOP);
        if (Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        failQueued();
    }

    private void run() {
        while (true) {
            Task<?> task;
            try {
                task = tasks.take();
            } catch (InterruptedException e) {
                return;
            }
            if (task == STOP) {
                return;
            }
            execute(task);
        }
    }

    private <T> void execute(Task<T> task) {
        if (closed) {
            task.future.completeExceptionally(closedError());
            return;
        }
        RuntimeException earlier = firstFailure;
        if (earlier != null) {
            task.future.completeExceptionally(new SwitchMLException(owner + ": an earlier operation failed, so the peers'"
                    + " streams are out of step and this instance cannot be used any more; close it on every worker and open"
                    + " new ones. The first failure: " + earlier.getMessage(), earlier));
            return;
        }
        try {
            task.future.complete(task.body.get());
        } catch (RuntimeException e) {
            firstFailure = e;
            try {
                onFailure.run();
            } finally {
                task.future.completeExceptionally(e);
            }
        } catch (Error e) {
            task.future.completeExceptionally(e);
            throw e;
        }
    }

    private void failQueued() {
        List<Task<?>> left = new ArrayList<>();
        tasks.drainTo(left);
        for (Task<?> t : left) {
            if (t != STOP) {
                t.future.completeExceptionally(closedError());
            }
        }
    }

    private SwitchMLException closedError() {
        return new SwitchMLException(owner + ": the instance is closed");
    }
}
