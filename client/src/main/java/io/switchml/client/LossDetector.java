package io.switchml.client;

import java.util.Arrays;

/**
 * Loss detection for one worker thread's slots, as TCP's RACK does (RFC 8985), with the retransmission
 * timeout of RFC 6298 ({@link RetransmissionTimeout}); docs/ARCHITECTURE.md section 4. Results come back in
 * about the order packets were sent, since every worker is clocked by the same results, so a slot whose
 * packet was sent well before a packet that has since been answered is lost; and when no result arrives
 * for a whole timeout, the overdue packets are resent and the timeout doubles. A stalled peer thus costs
 * one probe per timeout, not a window of retransmissions.
 *
 * <p>It keeps time only through the timestamps it is given (no clock, no I/O), so it can be driven by
 * synthetic sequences; it owns which slots are outstanding and when each was sent. One event loop
 * uses it; it is not thread-safe.
 */
final class LossDetector {
    private final RetransmissionTimeout rto;
    /** Whether a packet answered out of order counts as lost (RACK); the timeout alone otherwise. */
    private final boolean reorderingMeansLoss;
    private final boolean[] outstanding;
    private final long[] sentAt;
    private final long[] firstSentAt;
    private final int[] attempts;
    /** Send time of the most recently sent packet that has been answered. */
    private long latestAnsweredSentAt;
    /** When a result last arrived or the timer last fired; the timeout counts from here. */
    private long lastProgressAt;
    /** When {@link #detect} last ran (or the task started): the loop that reads the results was running then. */
    private long lastDetectAt;
    /** Whether the last {@link #detect} put a timeout off (its loop had not run): the next one does not again. */
    private boolean timeoutPutOff;
    private boolean timedOut;

    LossDetector(int slots, RetransmissionTimeout rto) {
        this(slots, rto, true);
    }

    /**
     * @param reorderingMeansLoss false on a path that loses nothing but reorders (the switch's shared
     *                            memory: slots complete in the order of the slowest worker), where
     *                            only the timeout finds a packet that never went out
     */
    LossDetector(int slots, RetransmissionTimeout rto, boolean reorderingMeansLoss) {
        this.reorderingMeansLoss = reorderingMeansLoss;
        if (slots < 1) {
            throw new IllegalArgumentException("a loss detector needs at least one slot, not " + slots);
        }
        this.rto = rto;
        this.outstanding = new boolean[slots];
        this.sentAt = new long[slots];
        this.firstSentAt = new long[slots];
        this.attempts = new int[slots];
    }

    /** A new task starts at {@code now}: nothing is outstanding, and the timeout counts from now. */
    void start(long now) {
        Arrays.fill(outstanding, false);
        latestAnsweredSentAt = now;
        lastProgressAt = now;
        lastDetectAt = now;
        timeoutPutOff = false;
    }

    /** Slot {@code i}'s packet went out at {@code now}: a new packet ({@code fresh}) or the same one again. */
    void sent(int i, long now, boolean fresh) {
        if (fresh) {
            attempts[i] = 0;
            firstSentAt[i] = now;
        } else {
            attempts[i]++;
        }
        outstanding[i] = true;
        sentAt[i] = now;
    }

    /**
     * The result for slot {@code i}'s outstanding packet arrived at {@code now}. Returns the round-trip
     * time it measured, or -1 when the packet had been sent more than once (Karn's rule: which copy
     * was answered is unknown).
     */
    long answered(int i, long now) {
        long rtt = attempts[i] == 0 ? now - sentAt[i] : -1;
        if (rtt >= 0) {
            rto.sample(rtt);
        }
        rto.answered();
        lastProgressAt = now;
        // An answer to a retransmitted packet may answer the original: count the original's time.
        latestAnsweredSentAt = Math.max(latestAnsweredSentAt, attempts[i] == 0 ? sentAt[i] : firstSentAt[i]);
        outstanding[i] = false;
        return rtt;
    }

    /** A result arrived for a packet already answered: a retransmission was not needed. */
    void duplicate() {
        rto.spuriousRetransmission();
    }

    /** Slot {@code i} has nothing outstanding any more (its task was dropped). */
    void forget(int i) {
        outstanding[i] = false;
    }

    boolean isOutstanding(int i) {
        return outstanding[i];
    }

    /** When slot {@code i}'s outstanding packet was last sent. */
    long sentAt(int i) {
        return sentAt[i];
    }

    /** How often slot {@code i}'s packet was sent again. */
    int attempts(int i) {
        return attempts[i];
    }

    /**
     * The slots to send again at {@code now}, written to {@code lost} (which holds one entry per slot);
     * returns how many. Either those sent more than the reordering window before the latest answered
     * packet (RACK), or, when there are none and nothing came back for a whole timeout, every overdue
     * slot ({@link #timedOut()} is then true, and the timeout has doubled).
     *
     * <p>It is called every tick of the loop that also reads the results. A call that comes more than half a
     * timeout after the one before finds a silence the loop did not watch: it was not running (descheduled on
     * a busy host, a pause of its JVM), and the results that came meanwhile wait unread in the socket. That
     * call does not time out; the next one, once the loop has read them, does if nothing came, however late it
     * comes itself (a loop that is always late still times out, one tick later).
     */
    int detect(long now, int[] lost) {
        long sincePrevious = now - lastDetectAt;
        lastDetectAt = now;
        timedOut = false;
        long lostBefore = latestAnsweredSentAt - rto.reorderWindowNanos();
        int n = 0;
        int oldest = -1;
        for (int i = 0; i < outstanding.length; i++) {
            if (!outstanding[i]) {
                continue;
            }
            if (reorderingMeansLoss && sentAt[i] - lostBefore < 0) {
                lost[n++] = i;
            } else if (oldest < 0 || sentAt[i] - sentAt[oldest] < 0) {
                oldest = i;
            }
        }
        long overdue = now - rto.timeoutNanos();
        boolean watched = sincePrevious <= rto.timeoutNanos() / 2 || timeoutPutOff;
        boolean silent = n == 0 && oldest >= 0 && lastProgressAt - overdue < 0 && sentAt[oldest] - overdue < 0;
        timeoutPutOff = silent && !watched;
        if (silent && watched) {
            timedOut = true;
            rto.backoff();
            lastProgressAt = now;
            for (int i = 0; i < outstanding.length; i++) {
                if (outstanding[i] && sentAt[i] - overdue < 0) {
                    lost[n++] = i;
                }
            }
        }
        return n;
    }

    /** Whether the last {@link #detect} found a whole timeout without a result. */
    boolean timedOut() {
        return timedOut;
    }

    /** Smoothed RTT in nanoseconds; 0 before the first sample. */
    long smoothedRttNanos() {
        return rto.smoothedRttNanos();
    }
}
