package io.switchml.client;

/**
 * The congestion window of one worker thread: how many of its granted slots may have a packet in flight
 * (docs/ARCHITECTURE.md section 4). Additive increase, multiplicative decrease, on two signals, as ATP
 * and Swift do for in-network aggregation and datacenter transport:
 *
 * <ul>
 * <li>delay: a result whose round-trip time exceeds the smallest one seen (the path's base RTT) by more
 *     than the target queueing delay shrinks the window in proportion to the excess (Swift's
 *     {@code 1 - beta (rtt - target) / rtt}, at most by half), so the queue at the bottleneck stays
 *     short and nothing overflows it;</li>
 * <li>loss: a packet found lost (RACK or a timeout) halves the window;</li>
 * <li>otherwise each result grows the window by 1 / window: one slot more per round trip.</li>
 * </ul>
 *
 * At most one decrease per round trip: a signal only counts for a packet sent after the last decrease
 * (what was already in flight then was sent under the old window). The window stays between 1 and the
 * slots the job was granted.
 *
 * <p>A slot completes only when every worker's packet for it arrived, so a worker that sends ahead of
 * the others just waits longer for its results: its RTT rises and its window shrinks towards the
 * slowest worker's, which effectively governs the job. {@link WorkerLane} releases waiting slots lowest
 * packet first, the same order at every worker, and always sends its lowest unfinished packet, so the
 * workers send the same packets and stay in step.
 *
 * <p>It keeps time only through the timestamps it is given, so synthetic sequences drive it exactly.
 * One event loop uses it; it is not thread-safe.
 */
final class CongestionWindow {
    /** Swift's beta: how strongly a delay above target shrinks the window. */
    static final double DELAY_BETA = 0.8;
    /** The largest decrease at once, as a fraction of the window (Swift's max_mdf). */
    static final double MAX_DECREASE = 0.5;
    /** The decrease on loss (TCP Reno's and ATP's). */
    static final double LOSS_DECREASE = 0.5;

    private final int maxWindow;
    private final long targetDelayNanos;
    private double window;
    private long baseRttNanos = Long.MAX_VALUE;
    /** When the window last shrank; signals of packets sent before it are not counted again. */
    private long lastDecreaseAt;
    private boolean decreased;
    private long delayDecreases;
    private long lossDecreases;

    /**
     * @param maxWindow        the slots the job was granted per worker thread
     * @param initialWindow    the window before any signal (clamped to 1..maxWindow)
     * @param targetDelayNanos queueing delay tolerated above the base RTT
     */
    CongestionWindow(int maxWindow, int initialWindow, long targetDelayNanos) {
        if (maxWindow < 1) {
            throw new IllegalArgumentException("a congestion window needs at least one slot, not " + maxWindow);
        }
        if (targetDelayNanos <= 0) {
            throw new IllegalArgumentException("the target delay must be positive, not " + targetDelayNanos + " ns");
        }
        this.maxWindow = maxWindow;
        this.targetDelayNanos = targetDelayNanos;
        this.window = Math.max(1, Math.min(maxWindow, initialWindow));
    }

    /**
     * A result arrived at {@code now} for a packet sent at {@code sentAt}; {@code rttNanos} is its round-trip
     * time, or -1 when it cannot be measured (the packet was sent more than once).
     */
    void onResult(long sentAt, long rttNanos, long now) {
        if (rttNanos >= 0) {
            baseRttNanos = Math.min(baseRttNanos, rttNanos);
            long excess = rttNanos - baseRttNanos - targetDelayNanos;
            if (excess > 0) {
                if (mayDecrease(sentAt)) {
                    double factor = Math.max(1 - DELAY_BETA * excess / rttNanos, 1 - MAX_DECREASE);
                    decrease(factor, now);
                    delayDecreases++;
                }
                return;
            }
        }
        window = Math.min(maxWindow, window + 1 / window);
    }

    /** A packet sent at {@code sentAt} was found lost at {@code now} (RACK or a retransmission timeout). */
    void onLoss(long sentAt, long now) {
        if (mayDecrease(sentAt)) {
            decrease(1 - LOSS_DECREASE, now);
            lossDecreases++;
        }
    }

    private boolean mayDecrease(long sentAt) {
        return !decreased || sentAt - lastDecreaseAt > 0;
    }

    private void decrease(double factor, long now) {
        window = Math.max(1, window * factor);
        lastDecreaseAt = now;
        decreased = true;
    }

    /** Packets that may be in flight now: 1..maxWindow. */
    int allowed() {
        return (int) window;
    }

    /** The window with its fraction (for statistics). */
    double window() {
        return window;
    }

    /** The smallest RTT seen, in nanoseconds; -1 before the first. */
    long baseRttNanos() {
        return baseRttNanos == Long.MAX_VALUE ? -1 : baseRttNanos;
    }

    long delayDecreases() {
        return delayDecreases;
    }

    long lossDecreases() {
        return lossDecreases;
    }

    int maxWindow() {
        return maxWindow;
    }
}
