package io.switchml.launch;

import java.time.Duration;

/**
 * How long a whole run (training, a launcher's ranks) may take: a positive duration, or zero for no
 * limit. Launchers kill a job only when asked to: a dead rank or switch ends a run within seconds
 * through the job's own liveness, so a fixed deadline would only cut long jobs short.
 */
public final class RunDeadline {
    private final long deadlineNanos;
    private final boolean limited;

    private RunDeadline(long deadlineNanos, boolean limited) {
        this.deadlineNanos = deadlineNanos;
        this.limited = limited;
    }

    /** From now, {@code timeout} (zero: never). */
    public static RunDeadline after(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("a run's timeout cannot be negative: " + timeout);
        }
        return new RunDeadline(System.nanoTime() + timeout.toNanos(), !timeout.isZero());
    }

    public boolean passed() {
        return limited && System.nanoTime() - deadlineNanos > 0;
    }
}
