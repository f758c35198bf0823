package io.switchml.collectives;

import java.time.Duration;

/** When a wait must end, and the timeout it came from (for the error message). */
record Deadline(long atNanos, Duration timeout) {
    static Deadline after(Duration timeout) {
        return new Deadline(System.nanoTime() + timeout.toNanos(), timeout);
    }

    boolean expired() {
        return System.nanoTime() - atNanos >= 0;
    }

    /** Milliseconds left, at least 1 while not expired (0 means expired). */
    long remainingMillis() {
        long nanos = atNanos - System.nanoTime();
        return nanos <= 0 ? 0 : Math.max(1, nanos / 1_000_000);
    }

    /** The same deadline moved later. */
    Deadline extendedBy(Duration extra) {
        return new Deadline(atNanos + extra.toNanos(), timeout.plus(extra));
    }
}
