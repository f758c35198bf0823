package io.switchml.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Congestion control switched on over loopback (where auto leaves it off): with 2 % of every worker's
 * datagrams lost, the losses are seen and judged (random, or with a queue) and the all-reduces stay
 * exact; with it off, the window state reads as off.
 */
class CongestionControlTest {
    private static final FaultInjection TWO_PERCENT_LOSS = new FaultInjection(0.02, 0, 1, 0, 1313);

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void windowsAdaptUnderLossAndResultsStayExact() {
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.slotsPerThread(32)
                .congestionControl(SwitchMLConfig.CongestionControl.ON).congestionInitialWindow(16)
                .faultInjection(TWO_PERCENT_LOSS))) {
            AllReduceExactnessTest.checkFloatSum(cluster, 5, 400_000, TestDefaults.ELEMENTS_PER_PACKET);
            AllReduceExactnessTest.checkIntSum(cluster, 6, 300_000);
            for (SwitchMLContext c : cluster.contexts) {
                WorkerStatistics.Snapshot s = c.statistics().snapshot();
                assertThat(s.randomLosses() + s.windowLossDecreases()).as("rank %d: losses judged", c.config().rank())
                        .isPositive();
                assertThat(s.congestionWindow()).isBetween(1.0, 32.0);
                assertThat(s.baseRttNanos()).isPositive();
                assertThat(s.retransmissions()).isPositive();
            }
        }
    }

    /**
     * Losses, duplicates and reordering make results arrive in a different order at each worker, while
     * small windows hold packets back: the job must still finish (no worker's window may wait for
     * packets another worker's window holds back) with exact results.
     */
    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void smallWindowsUnderLossAndReorderingNeverDeadlock() {
        for (long seed = 1; seed <= 4; seed++) {
            FaultInjection faults = new FaultInjection(0.03, 0.01, 0.2, 1_000, seed);
            try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.slotsPerThread(16)
                    .congestionControl(SwitchMLConfig.CongestionControl.ON).congestionInitialWindow(2)
                    .retransmitMin(java.time.Duration.ofMillis(2)).faultInjection(faults))) {
                AllReduceExactnessTest.checkFloatSum(cluster, seed, 200_000, TestDefaults.ELEMENTS_PER_PACKET);
                AllReduceExactnessTest.checkIntSum(cluster, seed + 100, 100_000);
            }
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void autoIsOffOnLoopback() {
        try (LocalCluster cluster = new LocalCluster(2)) {
            AllReduceExactnessTest.checkFloatSum(cluster, 7, 100_000, TestDefaults.ELEMENTS_PER_PACKET);
            for (SwitchMLContext c : cluster.contexts) {
                WorkerStatistics.Snapshot s = c.statistics().snapshot();
                assertThat(s.congestionWindow()).isZero();
                assertThat(s.baseRttNanos()).isEqualTo(-1);
                assertThat(s.windowDelayDecreases() + s.windowLossDecreases() + s.randomLosses()).isZero();
            }
        }
    }
}
