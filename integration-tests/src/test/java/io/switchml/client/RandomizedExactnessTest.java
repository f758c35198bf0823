package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.control.WorkerCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactness under faults: seeded random cases (1..8 workers, 1 to 4M elements, float32 and int32,
 * SUM and MEAN, several packet sizes, windows and thread counts), with the workers dropping,
 * duplicating and delaying (so reordering) their own datagrams both ways ({@link FaultInjector})
 * and the switch's drop simulator dropping packets on arrival and results on departure. Every
 * worker's result must equal {@link ReferenceAllReduce}'s bit for bit.
 *
 * <p>One cluster per (worker count, group) with the worker faults fixed by its configuration; the
 * switch's drop probabilities change from case to case. Every case prints one line (its parameters,
 * the retransmissions it took); a failure names the master seed, the cluster and the case. Replay
 * with {@code -Drandomized.seed=S} (default below) and, to run one cluster only,
 * {@code -Drandomized.cluster=N:G}.
 */
class RandomizedExactnessTest {
    private static final long MASTER_SEED = Long.getLong("randomized.seed", 0x5EED_2021L);
    private static final String ONLY = System.getProperty("randomized.cluster", "");
    /**
     * Clusters per worker count: group 0 without worker-side drops, the others with; groups 2 and 3
     * use 2048-element packets and start with a large case (1M to 4M elements); group 5 carries float32
     * in 16-bit lanes. Every cluster skips blocks zero at every worker (the default), which
     * {@link TestTensors} has. Group 6 injects no faults at the workers, so that they send runs of packets as one
     * segmented datagram and receive runs of results as one coalesced datagram (UDP GSO and GRO, docs/ARCHITECTURE.md
     * section 17): the switch's drop simulator then takes packets out of runs both ways.
     */
    private static final int GROUPS = 7;
    private static final int RUNS_BOTH_WAYS = 6;
    private static final int CASES_PER_CLUSTER = 12;
    private static final int LARGE = 4 << 20;

    private static final AtomicLong CASES = new AtomicLong();
    private static final AtomicLong ELEMENTS = new AtomicLong();
    private static final AtomicLong PACKETS = new AtomicLong();
    private static final AtomicLong RETRANSMISSIONS = new AtomicLong();
    private static final AtomicLong TIMEOUTS = new AtomicLong();
    private static final AtomicLong INJECTED_DROPS = new AtomicLong();
    private static final AtomicLong SWITCH_DROPS = new AtomicLong();
    private static final AtomicLong STALE = new AtomicLong();
    private static final long STARTED = System.nanoTime();

    static Stream<Arguments> clusters() {
        List<Arguments> all = new ArrayList<>();
        for (int n = 1; n <= 8; n++) {
            for (int g = 0; g < GROUPS; g++) {
                if (ONLY.isEmpty() || ONLY.equals(n + ":" + g)) {
                    all.add(Arguments.of(n, g));
                }
            }
        }
        return all.stream();
    }

    /** A cluster's settings, drawn from its seed. */
    record ClusterPlan(int workers, int group, long seed, int elementsPerPacket, int slotsPerThread, int threads,
                       FaultInjection faults) {
        boolean sixteenBitLanes() {
            return group == 5;
        }

        static ClusterPlan of(int workers, int group) {
            long seed = FaultInjector.seed(MASTER_SEED, workers, group);
            SplittableRandom r = new SplittableRandom(seed);
            int k;
            int window;
            int threads;
            if (group == 2 || group == 3) {
                // Large tensors: packets of the default size, so a 4M case stays ~2048 packets a worker.
                k = 2048;
                window = 64;
                threads = 1 + r.nextInt(2);
            } else {
                k = new int[]{64, 256, 1024, 2048, 2048}[r.nextInt(5)];
                window = new int[]{4, 16, 64}[r.nextInt(3)];
                threads = r.nextInt(3) == 0 ? 2 : 1;
            }
            double drop = group == 0 ? 0 : r.nextDouble(0.05);
            double duplicate = r.nextInt(4) == 0 ? 0 : r.nextDouble(0.05);
            // No delays; jitter on every datagram (heavy reordering); some datagrams late by up to a few
            // round trips; or a few very late ones (spurious timeouts, duplicates of finished rounds).
            int delayKind = r.nextInt(4);
            double delayRate = switch (delayKind) {
                case 2 -> 0.3;
                case 3 -> 0.02;
                default -> 1;
            };
            long maxDelayMicros = switch (delayKind) {
                case 0 -> 0;
                case 1 -> 50 + r.nextInt(500);
                case 2 -> 1_000 + r.nextInt(3_000);
                default -> 5_000 + r.nextInt(25_000);
            };
            long faultSeed = r.nextLong();
            if (group == RUNS_BOTH_WAYS) {
                return new ClusterPlan(workers, group, seed, k, window, threads, new FaultInjection(0, 0, 0, 0, faultSeed));
            }
            return new ClusterPlan(workers, group, seed, k, window, threads,
                    new FaultInjection(drop, duplicate, delayRate, maxDelayMicros, faultSeed));
        }

        @Override
        public String toString() {
            return String.format("cluster %d:%d (master seed %d): N=%d k=%d window=%d threads=%d%s, worker faults drop=%.2f%%"
                            + " dup=%.2f%% delay<=%dus on %.0f%% (fault seed %d)", workers, group, MASTER_SEED, workers,
                    elementsPerPacket, slotsPerThread, threads, sixteenBitLanes() ? " 16-bit lanes" : "", 100 * faults.dropRate(), 100 * faults.duplicateRate(),
                    faults.maxDelayMicros(), 100 * faults.delayRate(), faults.seed());
        }
    }

    /** One all-reduce. */
    record Case(int index, long dataSeed, int length, boolean floats, ReduceOp op, double ingressDrop, double egressDrop) {
        static Case of(ClusterPlan plan, int index) {
            SplittableRandom r = new SplittableRandom(plan.seed() * 31 + index);
            int k = plan.elementsPerPacket();
            int length;
            if (plan.group() == 2 && index == 0) {
                length = plan.workers() <= 4 ? LARGE : LARGE / 4 + r.nextInt(LARGE / 4);
            } else if (plan.group() == 3 && index == 0) {
                length = LARGE / 4 + r.nextInt(LARGE / 4);
            } else {
                int kind = r.nextInt(20);
                if (kind < 9) {
                    length = 1 + r.nextInt(4 * k); // a few packets, around packet boundaries
                } else if (kind < 16) {
                    length = 1 + r.nextInt(Math.min(100_000, 3 * k * plan.slotsPerThread() * plan.threads()));
                } else {
                    length = 1 + r.nextInt(Math.min(400_000, 40 * k * plan.slotsPerThread()));
                }
            }
            double in = r.nextInt(5) == 0 ? 0 : r.nextDouble(0.05);
            double out = r.nextInt(5) == 0 ? 0 : r.nextDouble(0.05);
            return new Case(index, r.nextLong(), length, r.nextBoolean(), r.nextBoolean() ? ReduceOp.SUM : ReduceOp.MEAN,
                    in, out);
        }

        @Override
        public String toString() {
            return String.format("case %d: %d %s %s (data seed %d), switch drop in=%.2f%% out=%.2f%%", index, length,
                    floats ? "float32" : "int32", op, dataSeed, 100 * ingressDrop, 100 * egressDrop);
        }
    }

    @ParameterizedTest(name = "{0} workers, group {1}")
    @MethodSource("clusters")
    void resultsAreExactUnderLossDuplicationAndReordering(int workers, int group) {
        ClusterPlan plan = ClusterPlan.of(workers, group);
        System.out.println(plan);
        try (LocalCluster cluster = new LocalCluster(workers, 1 + group % 2, b -> b
                .elementsPerPacket(plan.elementsPerPacket()).slotsPerThread(plan.slotsPerThread())
                .threads(plan.threads()).faultInjection(plan.faults()).lanes(plan.sixteenBitLanes() ? 16 : 32)
                .operationTimeout(Duration.ofSeconds(30)))) {
            for (int i = 0; i < CASES_PER_CLUSTER; i++) {
                run(cluster, plan, Case.of(plan, i));
            }
            cluster.service.dataplane().setDropProbabilities(0, 0);
            for (SwitchMLContext c : cluster.contexts) {
                assertThat(c.statistics().snapshot().operationTimeouts()).as("%s", plan).isZero();
                if (group == RUNS_BOTH_WAYS && NettyTransport.segmentation()) {
                    assertThat(c.statistics().count(WorkerCounter.SEGMENTED_DATAGRAMS)).as("%s: runs sent", plan)
                            .isPositive();
                }
            }
        }
    }

    private static void run(LocalCluster cluster, ClusterPlan plan, Case c) {
        int n = plan.workers();
        int k = plan.elementsPerPacket();
        cluster.service.dataplane().setDropProbabilities(c.ingressDrop(), c.egressDrop());
        long[] before = cluster.statisticsTotals();
        Map<String, Long> switchBefore = cluster.service.dataplane().counters();
        long start = System.nanoTime();
        String where = plan + ", " + c;
        if (c.floats()) {
            float[][] inputs = TestTensors.floatsByRank(c.dataSeed(), n, c.length());
            List<float[]> results;
            try {
                results = cluster.onEveryWorker((rank, ctx) -> {
                    float[] out = new float[c.length()];
                    ctx.allReduce(inputs[rank], out, c.op());
                    return out;
                });
            } catch (RuntimeException e) {
                throw new AssertionError(where + ": the all-reduce failed: " + e, e);
            }
            float[] expected = ReferenceAllReduce.floats(inputs, k, c.op(), plan.sixteenBitLanes());
            for (int r = 0; r < n; r++) {
                int at = Arrays.mismatch(results.get(r), expected);
                if (at >= 0) {
                    throw new AssertionError(where + ": rank " + r + " differs from the reference first at element " + at
                            + ": " + results.get(r)[at] + " instead of " + expected[at] + " (block " + at / k + ")");
                }
            }
        } else {
            int[][] inputs = TestTensors.intsByRank(c.dataSeed(), n, c.length());
            List<int[]> results;
            try {
                results = cluster.onEveryWorker((rank, ctx) -> {
                    int[] out = new int[c.length()];
                    ctx.allReduce(inputs[rank], out, c.op());
                    return out;
                });
            } catch (RuntimeException e) {
                throw new AssertionError(where + ": the all-reduce failed: " + e, e);
            }
            int[] expected = ReferenceAllReduce.ints(inputs, c.op());
            for (int r = 0; r < n; r++) {
                int at = Arrays.mismatch(results.get(r), expected);
                if (at >= 0) {
                    throw new AssertionError(where + ": rank " + r + " differs from the reference first at element " + at
                            + ": " + results.get(r)[at] + " instead of " + expected[at] + " (block " + at / k + ")");
                }
            }
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        long[] after = cluster.statisticsTotals();
        Map<String, Long> switchAfter = cluster.service.dataplane().counters();
        long sent = after[0] - before[0];
        long retransmissions = after[1] - before[1];
        long timeouts = after[2] - before[2];
        long injected = after[3] - before[3];
        long dups = after[4] - before[4];
        long delays = after[5] - before[5];
        long switchDrops = delta(switchBefore, switchAfter, "ingress_simulated_drops")
                + delta(switchBefore, switchAfter, "egress_simulated_drops");
        long stale = delta(switchBefore, switchAfter, "drops_stale_round");
        CASES.incrementAndGet();
        ELEMENTS.addAndGet((long) n * c.length());
        PACKETS.addAndGet(sent);
        RETRANSMISSIONS.addAndGet(retransmissions);
        TIMEOUTS.addAndGet(timeouts);
        INJECTED_DROPS.addAndGet(injected);
        SWITCH_DROPS.addAndGet(switchDrops);
        STALE.addAndGet(stale);
        System.out.printf("  %d:%d %s: exact; %d ms, %d packets sent, %d retransmissions (%d timeouts); injected %d drops,"
                        + " %d duplicates, %d delays; switch dropped %d, refused %d stale%n", plan.workers(), plan.group(),
                c, ms, sent, retransmissions, timeouts, injected, dups, delays, switchDrops, stale);
    }

    @AfterAll
    static void summary() {
        System.out.printf("RandomizedExactnessTest (master seed %d): %d cases exact, %d elements reduced, %d packets sent,"
                        + " %d retransmissions (%.2f%%), %d retransmission timeouts, %d datagrams dropped by the workers,"
                        + " %d by the switch, %d stale packets refused by the switch, %.1f s%n", MASTER_SEED, CASES.get(),
                ELEMENTS.get(), PACKETS.get(), RETRANSMISSIONS.get(),
                PACKETS.get() == 0 ? 0.0 : 100.0 * RETRANSMISSIONS.get() / PACKETS.get(), TIMEOUTS.get(),
                INJECTED_DROPS.get(), SWITCH_DROPS.get(), STALE.get(), (System.nanoTime() - STARTED) / 1e9);
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String counter) {
        return after.getOrDefault(counter, 0L) - before.getOrDefault(counter, 0L);
    }
}
