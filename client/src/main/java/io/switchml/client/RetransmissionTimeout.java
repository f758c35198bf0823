package io.switchml.client;

/**
 * The retransmission timeout of one worker thread, estimated from measured round-trip times as
 * TCP does (RFC 6298): smoothed RTT and its variation, RTO = SRTT + 4 RTTVAR, clamped to a floor
 * and a ceiling. Each expiry doubles it until a result arrives again (backoff is per thread, not
 * per packet: when nothing comes back, the cause is usually shared, such as a slow peer). Only
 * packets that were not retransmitted give samples (Karn's rule).
 */
final class RetransmissionTimeout {
    private final long minNanos;
    private final long maxNanos;
    private long srttNanos;
    private long rttvarNanos;
    private long rtoNanos;
    private int backoffs;
    private boolean measured;
    /** Reordering window in quarters of the smoothed RTT: 1..4 (RACK's reo_wnd_mult). */
    private int reorderQuarters = 1;
    private int answersSinceSpurious;

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

    /** The timer expired: wait twice as long next time. */
    void backoff() {
        backoffs = Math.min(backoffs + 1, 30);
    }

    long timeoutNanos() {
        long t = rtoNanos << backoffs;
        return t <= 0 || t > maxNanos ? maxNanos : t;
    }

    /**
     * How much later a packet must have been sent than one already answered before it counts as
     * lost: a quarter of the smoothed RTT at first (RACK's reordering window, RFC 8985), widened by
     * a quarter for each retransmission that proved spurious, up to one RTT, and narrowed again
     * after a long run of answers without one.
     */
    long reorderWindowNanos() {
        return measured ? srttNanos * reorderQuarters / 4 : rtoNanos;
    }

    /** A result came back for a packet already answered: a retransmission was not needed. */
    void spuriousRetransmission() {
        reorderQuarters = Math.min(4, reorderQuarters + 1);
        answersSinceSpurious = 0;
    }

    /** A result answered an outstanding packet. */
    void answered() {
        backoffs = 0;
        if (++answersSinceSpurious >= 1024 && reorderQuarters > 1) {
            reorderQuarters--;
            answersSinceSpurious = 0;
        }
    }

    /** Smoothed RTT in nanoseconds; 0 before the first sample. */
    long smoothedRttNanos() {
        return srttNanos;
    }
}
