package io.switchml.client;

/**
 * The retransmission timeout of one worker thread, estimated from measured round-trip times as
 * TCP does (RFC 6298): smoothed RTT and its variation, RTO = SRTT + 4 RTTVAR, clamped to a floor
 * and a ceiling, doubled for each further retransmission of the same packet. Only packets that
 * were not retransmitted give samples (Karn's rule).
 */
final class RetransmissionTimeout {
    private final long minNanos;
    private final long maxNanos;
    private long srttNanos;
    private long rttvarNanos;
    private long rtoNanos;
    private boolean measured;

    RetransmissionTimeout(long minNanos, long initialNanos, long maxNanos) {
        this.minNanos = minNanos;
        this.maxNanos = maxNanos;
        this.rtoNanos = initialNanos;
    }

    void sample(long rttNanos) {
        if (!measured) {
            srttNanos = rttNanos;
            rttvarNanos = rttNanos / 2;
            measured = true;
        } else {
            rttvarNanos += (Math.abs(srttNanos - rttNanos) - rttvarNanos) / 4;
            srttNanos += (rttNanos - srttNanos) / 8;
        }
        rtoNanos = Math.min(maxNanos, Math.max(minNanos, srttNanos + 4 * rttvarNanos));
    }

    /** The timeout for a packet already sent {@code attempts} times before (0 for the first send). */
    long timeoutNanos(int attempts) {
        long t = rtoNanos << Math.min(attempts, 20);
        return t <= 0 || t > maxNanos ? maxNanos : t;
    }

    /** Smoothed RTT in nanoseconds; 0 before the first sample. */
    long smoothedRttNanos() {
        return srttNanos;
    }
}
