package io.switchml.client;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.util.ResourceLeakDetector;
import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 500 all-reduces in a row on one job at about 1 % loss each way (the switch's drop simulator on
 * arrival and departure, and the workers dropping, duplicating and delaying their own datagrams),
 * every result verified exactly. Nothing may fail, and nothing may pile up: used heap after a GC,
 * Netty's direct memory and the live thread count must not grow between the first and the last 50
 * all-reduces, and no Netty buffer may be found leaked.
 */
class SoakIT {
    private static final int WORKERS = 4;
    private static final int ITERATIONS = 500;
    private static final int WINDOW = 50;
    private static final int K = 2048;
    private static final int[] SIZES = {1_000, 40_000, 64 * K + 5, 250_001, 7, 2 * K, 600_000};
    private static final long MIB = 1 << 20;

    @Test
    void fiveHundredAllReducesAtOnePercentLossStayExactAndLeakNothing() {
        AtomicInteger leaks = new AtomicInteger();
        boolean leakListener = listenForLeaks(leaks);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        FaultInjection faults = new FaultInjection(0.01, 0.01, 0.05, 2_000, 500);
        // Inputs and expected results, computed once and cycled.
        int cases = 2 * SIZES.length;
        float[][][] floatInputs = new float[cases][][];
        float[][] floatExpected = new float[cases][];
        int[][][] intInputs = new int[cases][][];
        int[][] intExpected = new int[cases][];
        for (int c = 0; c < cases; c++) {
            int size = SIZES[c % SIZES.length];
            ReduceOp op = c < SIZES.length ? ReduceOp.SUM : ReduceOp.MEAN;
            floatInputs[c] = TestTensors.floatsByRank(100 + c, WORKERS, size);
            floatExpected[c] = ReferenceAllReduce.floats(floatInputs[c], K, op);
            intInputs[c] = TestTensors.intsByRank(200 + c, WORKERS, size);
            intExpected[c] = ReferenceAllReduce.ints(intInputs[c], op);
        }
        long start = System.nanoTime();
        try (LocalCluster cluster = new LocalCluster(WORKERS, 1, b -> b.elementsPerPacket(K).faultInjection(faults)
                .operationTimeout(Duration.ofSeconds(30)))) {
            cluster.service.dataplane().setDropProbabilities(0.01, 0.01);
            long heapFirst = 0;
            long directFirst = 0;
            int threadsFirst = 0;
            int threadsLast = 0;
            long sentFirst = 0;
            long retransmissionsFirst = 0;
            for (int i = 0; i < ITERATIONS; i++) {
                int c = (i / 2) % cases;
                ReduceOp op = c < SIZES.length ? ReduceOp.SUM : ReduceOp.MEAN;
                String what = "all-reduce " + i + " (" + (i % 2 == 0 ? "float32 " : "int32 ") + op + " of "
                        + SIZES[c % SIZES.length] + " elements)";
                try {
                    if (i % 2 == 0) {
                        float[][] in = floatInputs[c];
                        List<float[]> results = cluster.onEveryWorker((rank, ctx) -> {
                            float[] out = new float[in[rank].length];
                            ctx.allReduce(in[rank], out, op);
                            return out;
                        });
                        for (int r = 0; r < WORKERS; r++) {
                            assertThat(Arrays.mismatch(results.get(r), floatExpected[c])).as("%s, rank %d: first wrong element", what, r)
                                    .isEqualTo(-1);
                        }
                    } else {
                        int[][] in = intInputs[c];
                        List<int[]> results = cluster.onEveryWorker((rank, ctx) -> {
                            int[] out = new int[in[rank].length];
                            ctx.allReduce(in[rank], out, op);
                            return out;
                        });
                        for (int r = 0; r < WORKERS; r++) {
                            assertThat(Arrays.mismatch(results.get(r), intExpected[c])).as("%s, rank %d: first wrong element", what, r)
                                    .isEqualTo(-1);
                        }
                    }
                } catch (RuntimeException e) {
                    throw new AssertionError(what + " failed: " + e, e);
                }
                if (i < WINDOW) {
                    threadsFirst = Math.max(threadsFirst, threads.getThreadCount());
                } else if (i >= ITERATIONS - WINDOW) {
                    threadsLast = Math.max(threadsLast, threads.getThreadCount());
                }
                if (i == WINDOW - 1) {
                    heapFirst = usedHeapAfterGc();
                    directFirst = nettyDirectMemory();
                    long[] t = cluster.statisticsTotals();
                    sentFirst = t[0];
                    retransmissionsFirst = t[1];
                }
            }
            long seconds = (System.nanoTime() - start) / 1_000_000_000;
            long heapLast = usedHeapAfterGc();
            long directLast = nettyDirectMemory();
            long[] t = cluster.statisticsTotals();
            System.out.printf("SoakIT: %d all-reduces on %d workers exact in %d s; %d packets sent, %d retransmissions"
                            + " (%.2f%%), %d retransmission timeouts, injected %d drops, %d duplicates, %d delays; switch"
                            + " counters %s%n", ITERATIONS, WORKERS, seconds, t[0], t[1], 100.0 * t[1] / t[0], t[2], t[3],
                    t[4], t[5], cluster.service.dataplane().counters());
            System.out.printf("SoakIT: after all-reduce %d vs %d: used heap after GC %d -> %d KiB, Netty direct memory"
                            + " %d -> %d KiB, live threads (max) %d -> %d; retransmissions %d in the first %d, %d in the"
                            + " last %d; leaks reported %s%n", WINDOW, ITERATIONS, heapFirst / 1024, heapLast / 1024,
                    directFirst / 1024, directLast / 1024, threadsFirst, threadsLast, retransmissionsFirst, WINDOW,
                    t[1] - retransmissionsFirst, ITERATIONS - WINDOW, leakListener ? leaks.get() : "(not observed)");
            for (SwitchMLContext ctx : cluster.contexts) {
                assertThat(ctx.statistics().snapshot().operationTimeouts()).isZero();
                assertThat(ctx.statistics().snapshot().operations()).isEqualTo(ITERATIONS);
            }
            assertThat(t[1]).as("retransmissions: loss was injected and recovered").isPositive();
            assertThat(t[3]).as("datagrams dropped by the workers").isPositive();
            assertThat(heapLast - heapFirst).as("heap growth").isLessThan(64 * MIB);
            assertThat(directLast - directFirst).as("Netty direct memory growth").isLessThan(16 * MIB);
            assertThat(threadsLast).as("live threads").isLessThanOrEqualTo(threadsFirst + 4);
            assertThat(sentFirst).isPositive();
        }
        if (leakListener) {
            // Leaks are reported when a lost buffer has been collected and another is allocated.
            for (int i = 0; i < 3; i++) {
                System.gc();
                for (int j = 0; j < 1000; j++) {
                    ByteBufAllocator.DEFAULT.directBuffer(64).release();
                }
            }
            assertThat(leaks.get()).as("Netty buffers never released").isZero();
        }
    }

    private static long usedHeapAfterGc() {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }

    private static long nettyDirectMemory() {
        return ByteBufAllocator.DEFAULT instanceof ByteBufAllocatorMetricProvider p ? p.metric().usedDirectMemory() : 0;
    }

    /**
     * Counts the leaks Netty's detector reports for buffers (it samples about one buffer in 128 at
     * its default level). Best effort: false when the detector cannot be reached.
     */
    private static boolean listenForLeaks(AtomicInteger leaks) {
        try {
            Field f = Class.forName("io.netty.buffer.AbstractByteBuf").getDeclaredField("leakDetector");
            f.setAccessible(true);
            ResourceLeakDetector<?> detector = (ResourceLeakDetector<?>) f.get(null);
            detector.setLeakListener((type, records) -> leaks.incrementAndGet());
            return ResourceLeakDetector.isEnabled();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }
}
