package io.switchml.spark;

/** A barrier stage that failed or timed out; the message says which and why, the cause is Spark's or the rank's error. */
public final class BarrierStageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BarrierStageException(String message, Throwable cause) {
        super(message, cause);
    }
}
