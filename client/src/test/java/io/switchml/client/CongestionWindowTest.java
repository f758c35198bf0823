package io.switchml.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The congestion window driven by synthetic results, RTTs and losses (timestamps passed in). */
class CongestionWindowTest {
    private static final long MS = 1_000_000;
    private static final long TARGET = 2 * MS;

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
            w.onResult(t, MS, t += MS);
        }
        assertThat(w.allowed()).isEqualTo(16);
        assertThat(w.delayDecreases()).isZero();
        assertThat(w.baseRttNanos()).isEqualTo(MS);
    }

    @Test
    void aDelayAboveTheTargetShrinksTheWindowInProportionOncePerRoundTrip() {
        CongestionWindow w = new CongestionWindow(64, 32, TARGET);
        w.onResult(0, MS, MS);                       // base RTT 1 ms
        // 5 ms = base + target + 2 ms: 1 - 0.8 x 2 / 5 = 0.68.
        double before = w.window();
        w.onResult(2 * MS, 5 * MS, 7 * MS);
        assertThat(w.window()).isCloseTo(before * 0.68, within(1e-9));
        assertThat(w.delayDecreases()).isEqualTo(1);
        // Sent before that decrease: already counted.
        w.onResult(3 * MS, 5 * MS, 8 * MS);
        assertThat(w.delayDecreases()).isEqualTo(1);
        // Sent after it: counts again, at most by half.
        w.onResult(9 * MS, 100 * MS, 109 * MS);
        assertThat(w.window()).isCloseTo(before * 0.68 * 0.5, within(1e-9));
        assertThat(w.delayDecreases()).isEqualTo(2);
    }

    @Test
    void aDelayWithinTheTargetStillGrows() {
        CongestionWindow w = new CongestionWindow(64, 10, TARGET);
        w.onResult(0, MS, MS);
        w.onResult(MS, 3 * MS, 4 * MS);              // queueing 2 ms = target: not above it
        assertThat(w.window()).isGreaterThan(10.1);
        assertThat(w.delayDecreases()).isZero();
    }

    @Test
    void lossHalvesTheWindowOncePerRoundTripAndNeverBelowOne() {
        CongestionWindow w = new CongestionWindow(64, 40, TARGET);
        w.onLoss(0, 10 * MS);
        assertThat(w.allowed()).isEqualTo(20);
        w.onLoss(5 * MS, 11 * MS);                   // sent before the halving: the same congestion
        assertThat(w.allowed()).isEqualTo(20);
        for (long t = 20; t < 200; t += 10) {
            w.onLoss(t * MS, (t + 1) * MS);
        }
        assertThat(w.allowed()).isEqualTo(1);
        assertThat(w.lossDecreases()).isEqualTo(1 + 18);
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
        for (int step = 0; step < 20_000; step++) {
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
