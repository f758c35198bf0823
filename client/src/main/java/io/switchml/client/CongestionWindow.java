package io.switchml.client;

/**
 * The congestion window of one worker thread: how many of its granted slots may have a packet in flight
 * (docs/ARCHITECTURE.md section 4). Delay is the congestion signal; loss alone is not.
 *
 * <ul>
 * <li><b>Delay.</b> Once per round trip (a window's worth of results and losses) the smallest RTT of that
 *     round trip, minus the smallest ever seen (the path's base RTT), is the standing queue at the
 *     bottleneck. Above the target it shrinks the window in proportion to the excess, Swift's
 *     {@code 1 - beta (rtt - target) / rtt}, at most by half. The round trip's minimum, not each sample:
 *     a slot completes only when every worker's packet for it arrived, so one worker's lost packet
 *     delays that slot's result at every worker by a retransmission timeout, which is not a queue.
 *     Queueing delays every packet of the round trip; a loss delays one slot.</li>
 * <li><b>Loss</b> (RACK or a timeout) halves the window only when more than half of the packets were
 *     lost in two round trips in a row: a buffer too shallow to show delay, or a policer. Any other loss
 *     is random loss: SwitchML's premise is that a lost packet costs one slot's round, not the job's
 *     rate, so it is only counted ({@link Reaction#RANDOM_LOSS}). A queue that overflows shows as delay
 *     first (its limit is above the target), and the delay signal shrinks the window within a round
 *     trip. Not even a loss while the queue stands above the target is taken as congestion: the window
 *     runs with its queue near the target, so losses there are as random as anywhere (measured: halving
 *     on those cost half the rate at 5 % loss). As in Swift and BBR, not as in TCP Reno.</li>
 * <li>Otherwise each result grows the window by 1 / window: one slot more per round trip.</li>
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
    /** The decrease on heavy loss (TCP Reno's and ATP's on loss). */
    static final double LOSS_DECREASE = 0.5;
    /**
     * The share of a round trip's packets whose loss, two round trips in a row, counts as congestion even
     * without queueing. One round trip is not enough: at 5 % loss on every link a worker of four misses
     * about a quarter of its results, and a small window loses half of one round trip by chance often.
     */
    static final double HEAVY_LOSS_SHARE = 0.5;

    /** What a signal did to the window. */
    enum Reaction {
        /** Grew it, or left it (a signal already counted in this round trip). */
        NONE,
        /** Shrank it on a standing queue. */
        DELAY_DECREASE,
        /** Halved it on a loss with evidence of congestion. */
        LOSS_DECREASE,
        /** Left it alone on a loss without evidence of congestion. */
        RANDOM_LOSS
    }

    private final int maxWindow;
    private final long targetDelayNanos;
    private double window;
    private long baseRttNanos = Long.MAX_VALUE;
    /** The last round trip's smallest RTT above the base RTT: the standing queue (0 before any). */
    private long standingQueueNanos;
    /** The round trip being measured: its smallest RTT, its results and its losses. */
    private long roundTripMinRttNanos = Long.MAX_VALUE;
    private int roundTripResults;
    private int roundTripLosses;
    /** Whether the last round trip lost more than {@link #HEAVY_LOSS_SHARE} of its packets. */
    private boolean lastRoundTripHeavyLoss;
    /** When the window last shrank; signals of packets sent before it are not counted again. */
    private long lastDecreaseAt;
    private boolean decreased;

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
    Reaction onResult(long sentAt, long rttNanos, long now) {
        if (rttNanos >= 0) {
            baseRttNanos = Math.min(baseRttNanos, rttNanos);
            roundTripMinRttNanos = Math.min(roundTripMinRttNanos, rttNanos);
        }
        roundTripResults++;
        Reaction ended = roundTripEnded() ? endRoundTrip(sentAt, now) : Reaction.NONE;
        if (ended == Reaction.NONE && standingQueueNanos <= targetDelayNanos) {
            window = Math.min(maxWindow, window + 1 / window);
        }
        return ended;
    }

    /** A packet sent at {@code sentAt} was found lost at {@code now} (RACK or a retransmission timeout). */
    Reaction onLoss(long sentAt, long now) {
        roundTripLosses++;
        Reaction ended = roundTripEnded() ? endRoundTrip(sentAt, now) : Reaction.NONE;
        return ended != Reaction.NONE ? ended : Reaction.RANDOM_LOSS;
    }

    private boolean roundTripEnded() {
        return roundTripResults + roundTripLosses >= window;
    }

    /**
     * Closes the round trip: its minimum RTT sets the standing queue, which may shrink the window, or
     * else heavy loss in this round trip and the last may halve it. A round trip of retransmitted
     * packets only keeps the last queue.
     *
     * @return how the window shrank, or {@link Reaction#NONE}
     */
    private Reaction endRoundTrip(long sentAt, long now) {
        long minRtt = roundTripMinRttNanos;
        boolean heavy = roundTripLosses > HEAVY_LOSS_SHARE * (roundTripResults + roundTripLosses);
        boolean heavyLoss = heavy && lastRoundTripHeavyLoss;
        lastRoundTripHeavyLoss = heavy;
        roundTripMinRttNanos = Long.MAX_VALUE;
        roundTripResults = 0;
        roundTripLosses = 0;
        if (minRtt != Long.MAX_VALUE) {
            standingQueueNanos = minRtt - baseRttNanos;
        }
        if (!mayDecrease(sentAt)) {
            return Reaction.NONE;
        }
        long excess = standingQueueNanos - targetDelayNanos;
        if (excess > 0 && minRtt != Long.MAX_VALUE) {
            decrease(Math.max(1 - DELAY_BETA * excess / minRtt, 1 - MAX_DECREASE), now);
            return Reaction.DELAY_DECREASE;
        }
        if (heavyLoss) {
            decrease(1 - LOSS_DECREASE, now);
            return Reaction.LOSS_DECREASE;
        }
        return Reaction.NONE;
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

    /** The last round trip's standing queue: its smallest RTT above the base RTT, in nanoseconds. */
    long standingQueueNanos() {
        return standingQueueNanos;
    }

    int maxWindow() {
        return maxWindow;
    }
}
