package io.switchml.api;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** Waits for an operation and rethrows its failure as the unchecked exception it was. */
public final class Futures {
    private Futures() {
    }

    public static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchMLException("interrupted while waiting for an all-reduce", e);
        } catch (CancellationException e) {
            throw new SwitchMLException("the all-reduce was cancelled", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            throw new SwitchMLException(cause.getMessage(), cause);
        }
    }
}
