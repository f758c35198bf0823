package io.switchml.client;

import io.switchml.client.CongestionWindow.Reaction;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The congestion window driven by synthetic results, RTTs and losses (timestamps passed in). */
class CongestionWindowTest {
    private static final long MS = 1_000_000;
    private static final long TARGET = 2 * MS;

    /** Results for one full round trip of the current window, all at {@code rtt}, one per ms; returns the reactions. */
    private static List<Reaction> roundTrip(CongestionWindow w, long[] clock, long rtt) {
        List<Reaction> reactions = new ArrayList<>();
        int packets = (int) Math.ceil(w.window()) + 1;
        for (int i = 0; i < packets; i++) {
            long now = clock[0] += MS;
            reactions.add(w.onResult(now - rtt, rtt, now));
        }
        return reactions;
    }

    /**
     * Gives {@code signal} (at one ms intervals) until the window shrinks, at most {@code limit} times.
     *
     * @return the window just before it shrank; fails if it never did
     */
    private static double untilDecrease(CongestionWindow w, long[] clock, int limit, LongFunction<Reaction> signal) {
        for (int i = 0; i < limit; i++) {
            double before = w.window();
            Reaction r = signal.apply(clock[0] += MS);
            if (r == Reaction.DELAY_DECREASE || r == Reaction.LOSS_DECREASE) {
                return before;
            }
        }
        throw new AssertionError("no decrease in " + limit + " signals");
    }

    @Test
    void growsByAboutOneSlotPerWindowOfResultsUpToTheGrantedSlots() {
        CongestionWindow w = new CongestionWindow(16, 4, TARGET);
        assertThat(w.allowed()).isEqualTo(4);
        long t = 0;
        for (int i = 0; i < 4; i++) {
            w.onResult(t, MS, t += MS);
        }
        assertThat(w.window()).isCloseTo(5, within(0.1));
        for (int i = 0; i < 1000; i++) {
            assertThat(w.onResult(t, MS, t += MS)).isEqualTo(Reaction.NONE);
        }
        assertThat(w.allowed()).isEqualTo(16);
        assertThat(w.baseRttNanos()).isEqualTo(MS);
    }

    @Test
    void aStandingQueueAboveTheTargetShrinksTheWindowInProportionOncePerRoundTrip() {
        CongestionWindow w = new CongestionWindow(64, 8, TARGET);
        long[] clock = {100 * MS};
        roundTrip(w, clock, MS);                                    // base RTT 1 ms
        // A round trip at 5 ms = base + target + 2 ms: 1 - 0.8 x 2 / 5 = 0.68.
        double before = untilDecrease(w, clock, 20, now -> w.onResult(now - 5 * MS, 5 * MS, now));
        assertThat(w.standingQueueNanos()).isEqualTo(4 * MS);
        assertThat(w.window()).isCloseTo(before * 0.68, within(1e-9));
        // A deeper queue: at most by half, and not before a packet sent after the last decrease returns.
        long decreasedAt = clock[0];
        double again = untilDecrease(w, clock, 1000, now -> w.onResult(now - 100 * MS, 100 * MS, now));
        assertThat(clock[0] - 100 * MS).isGreaterThan(decreasedAt);
        assertThat(w.window()).isCloseTo(Math.max(1, again * 0.5), within(1e-9));
    }

    @Test
    void oneSlowResultIsNotAQueue() {
        // A slot whose result waited for another worker's retransmission: one sample far above the rest.
        CongestionWindow w = new CongestionWindow(64, 10, TARGET);
        long[] clock = {100 * MS};
        roundTrip(w, clock, MS);
        double before = w.window();
        long now = clock[0] += MS;
        assertThat(w.onResult(now - 30 * MS, 30 * MS, now)).isEqualTo(Reaction.NONE);
        assertThat(roundTrip(w, clock, MS)).containsOnly(Reaction.NONE);
        assertThat(w.window()).isGreaterThan(before + 1);
        assertThat(w.standingQueueNanos()).isZero();
    }

    @Test
    void aQueueWithinTheTargetStillGrows() {
        CongestionWindow w = new CongestionWindow(64, 10, TARGET);
        long[] clock = {100 * MS};
        roundTrip(w, clock, MS);
        double before = w.window();
        assertThat(roundTrip(w, clock, 3 * MS)).containsOnly(Reaction.NONE); // queueing 2 ms = target
        assertThat(w.window()).isGreaterThan(before + 0.9);
    }

    @Test
    void randomLossWithoutQueueingLeavesTheWindowAlone() {
        CongestionWindow w = new CongestionWindow(64, 40, TARGET);
        long[] clock = {100 * MS};
        roundTrip(w, clock, MS);
        double before = w.window();
        // 5 % of every round trip lost, no queue: the window keeps growing.
        for (int r = 0; r < 20; r++) {
            long now = clock[0] += MS;
            assertThat(w.onLoss(now - 10 * MS, now)).isEqualTo(Reaction.RANDOM_LOSS);
            assertThat(w.onLoss(now - 10 * MS, now)).isEqualTo(Reaction.RANDOM_LOSS);
            assertThat(roundTrip(w, clock, MS)).containsOnly(Reaction.NONE);
        }
        assertThat(w.window()).isGreaterThan(before + 15);
    }

    @Test
    void lossWithAQueueAboveTheTargetIsLeftToTheDelaySignal() {
        CongestionWindow w = new CongestionWindow(64, 40, TARGET);
        long[] clock = {100 * MS};
        roundTrip(w, clock, MS);
        long queue = MS + TARGET * 5 / 4;                           // 2.5 ms: above the target
        untilDecrease(w, clock, 100, now -> w.onResult(now - queue, queue, now));
        double before = w.window();
        long now = clock[0] += MS;
        assertThat(w.onLoss(now - MS, now)).isEqualTo(Reaction.RANDOM_LOSS);
        assertThat(w.window()).isEqualTo(before);
    }

    @Test
    void heavyLossNeverTakesTheWindowBelowOne() {
        CongestionWindow w = new CongestionWindow(64, 40, TARGET);
        long[] clock = {100 * MS};
        for (int i = 0; i < 1000; i++) {
            long now = clock[0] += MS;
            w.onLoss(now - MS / 2, now);
        }
        assertThat(w.allowed()).isEqualTo(1);
    }

    @Test
    void mostOfTwoRoundTripsLostHalvesEvenWithoutQueueing() {
        // A buffer too shallow to show delay, or a policer: loss is the only signal left.
        CongestionWindow w = new CongestionWindow(64, 10, TARGET);
        long[] clock = {100 * MS};
        roundTrip(w, clock, MS);
        roundTrip(w, clock, MS);
        // Half of a round trip lost, then a good round trip: chance, not congestion.
        for (int i = 0; i < 7; i++) {
            long now = clock[0] += MS;
            assertThat(w.onLoss(now - MS, now)).isNotEqualTo(Reaction.LOSS_DECREASE);
        }
        assertThat(roundTrip(w, clock, MS)).doesNotContain(Reaction.LOSS_DECREASE);
        assertThat(roundTrip(w, clock, MS)).doesNotContain(Reaction.LOSS_DECREASE);
        double before = untilDecrease(w, clock, 40, now -> w.onLoss(now - MS, now));
        assertThat(w.window()).isCloseTo(before / 2, within(1e-9));
    }

    @Test
    void anUnmeasuredResultOnlyGrows() {
        CongestionWindow w = new CongestionWindow(8, 2, TARGET);
        w.onResult(0, -1, 100 * MS);
        assertThat(w.window()).isCloseTo(2.5, within(1e-9));
        assertThat(w.baseRttNanos()).isEqualTo(-1);
    }

    @Test
    void theInitialWindowIsClampedAndBadArgumentsAreRefused() {
        assertThat(new CongestionWindow(8, 100, TARGET).allowed()).isEqualTo(8);
        assertThat(new CongestionWindow(8, 0, TARGET).allowed()).isEqualTo(1);
        assertThatThrownBy(() -> new CongestionWindow(0, 1, TARGET)).hasMessageContaining("at least one slot");
        assertThatThrownBy(() -> new CongestionWindow(8, 1, 0)).hasMessageContaining("target delay");
    }

    @Test
    void twoWindowsSharingABottleneckConverge() {
        // A synthetic shared queue: RTT = base + (inflight of both - capacity) x per-packet time when above capacity.
        CongestionWindow a = new CongestionWindow(64, 60, TARGET);
        CongestionWindow b = new CongestionWindow(64, 2, TARGET);
        long t = 0;
        for (int step = 0; step < 40_000; step++) {
            double queued = Math.max(0, a.allowed() + b.allowed() - 8);
            long rtt = MS + (long) (queued * 0.5 * MS);
            CongestionWindow w = step % 2 == 0 ? a : b;
            w.onResult(t - rtt, rtt, t);
            t += MS / 4;
        }
        assertThat(Math.abs(a.window() - b.window())).as("a %s, b %s", a.window(), b.window())
                .isLessThan(0.2 * (a.window() + b.window()) / 2 + 1);
    }
}
