package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.api.SwitchMLException;
import io.switchml.api.UnrepresentableValueException;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * 16-bit lanes (docs/ARCHITECTURE.md section 15): two values per element, the same results on every
 * worker, equal to {@link ReferenceAllReduce}'s 16-bit reference bit for bit, under loss, with zero
 * blocks skipped, with special values; half the bytes; and a job whose ranks disagree is refused.
 */
class SixteenBitLanesTest {
    private static final int K = TestDefaults.ELEMENTS_PER_PACKET;

    /** Random values with zeros, negative zeros, subnormals and a wide range of magnitudes mixed in. */
    private static float[][] inputs(long seed, int n, int length) {
        float[][] inputs = TestTensors.floatsByRank(seed, n, length);
        for (int r = 0; r < n; r++) {
            for (int i = r; i < length; i += 7) {
                switch ((i / 7 + r) % 4) {
                    case 0 -> inputs[r][i] = -0f;
                    case 1 -> inputs[r][i] = Float.MIN_VALUE * (i % 5);
                    case 2 -> inputs[r][i] = (float) Math.scalb(inputs[r][i], 30);
                    default -> inputs[r][i] = -inputs[r][i];
                }
            }
        }
        return inputs;
    }



    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2, 3, 4})
    void resultsAreTheSixteenBitReferencesOnEveryWorkerInHalfTheBytes(int n) {
        try (LocalCluster sixteen = new LocalCluster(n, 1, b -> b.lanes(16).threads(2));
             LocalCluster thirtyTwo = new LocalCluster(n, 1, b -> b.threads(2))) {
            long seed = 300L * n;
            for (int length : new int[]{1, 2 * K - 1, 2 * K, 2 * K + 1, 9 * K + 3, 40 * K}) {
                for (ReduceOp op : ReduceOp.values()) {
                    float[][] inputs = inputs(seed++, n, length);
                    List<WorkerStatistics.Snapshot> before16 = sixteen.snapshots();
                    List<WorkerStatistics.Snapshot> before32 = thirtyTwo.snapshots();
                    List<float[]> results = sixteen.allReduce(inputs, op);
                    List<WorkerStatistics.Snapshot> after16 = sixteen.snapshots();
                    List<float[]> wide = thirtyTwo.allReduce(inputs, op);
                    List<WorkerStatistics.Snapshot> after32 = thirtyTwo.snapshots();
                    float[] expected = ReferenceAllReduce.floats(inputs, K, op, true);
                    String where = n + " workers, " + length + " values, " + op;
                    for (int r = 0; r < n; r++) {
                        assertThat(results.get(r)).as("%s, rank %d", where, r).isEqualTo(expected);
                    }
                    assertThat(wide.get(0)).as("%s: the 32-bit path is unchanged", where)
                            .isEqualTo(ReferenceAllReduce.floats(inputs, K, op));
                    if (length == 40 * K) {
                        // First transmissions only: a retransmission timeout on a loaded machine is not the lanes' size.
                        double ratio = LocalCluster.bytesSentOnce(before16, after16)
                                / LocalCluster.bytesSentOnce(before32, after32);
                        assertThat(ratio).as("%s: bytes sent in first transmissions, 16 / 32 bits", where)
                                .isBetween(0.45, 0.55);
                    }
                }
            }
        }
    }

    @Test
    void lossDuplicationAndReorderingLeaveTheResultsExact() {
        int n = 3;
        FaultInjection faults = new FaultInjection(0.03, 0.03, 0.3, 2_000, 23);
        try (LocalCluster cluster = new LocalCluster(n, 1, b -> b.lanes(16).slotsPerThread(8).faultInjection(faults)
                .operationTimeout(Duration.ofSeconds(60)))) {
            for (int c = 0; c < 4; c++) {
                float[][] inputs = inputs(900 + c, n, 37 * K + 5);
                // Blocks zero at every worker too, which the job skips.
                for (float[] rank : inputs) {
                    java.util.Arrays.fill(rank, 4 * K, 20 * K, 0f);
                }
                List<float[]> results = cluster.allReduce(inputs, ReduceOp.SUM);
                float[] expected = ReferenceAllReduce.floats(inputs, K, ReduceOp.SUM, true);
                for (int r = 0; r < n; r++) {
                    assertThat(results.get(r)).as("case %d, rank %d", c, r).isEqualTo(expected);
                }
            }
            assertThat(cluster.contexts.get(0).statistics().zeroBlocksSkipped()).isPositive();
        }
    }

    @Test
    void anUnrepresentableValueFailsTheCallAndWritesNaNForItsBlockOnly() {
        int n = 2;
        int length = 6 * K;
        try (LocalCluster cluster = new LocalCluster(n, 1, b -> b.lanes(16))) {
            float[][] inputs = inputs(5, n, length);
            inputs[1][3 * K] = Float.POSITIVE_INFINITY; // block 1 of 2K values
            List<Throwable> errors = new ArrayList<>();
            List<float[]> outputs = cluster.onEveryWorker((rank, ctx) -> {
                float[] out = new float[length];
                try {
                    ctx.allReduce(inputs[rank], out, ReduceOp.SUM);
                } catch (UnrepresentableValueException e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                }
                return out;
            });
            assertThat(errors).hasSize(n);
            float[] expected = ReferenceAllReduce.floats(inputs, K, ReduceOp.SUM, true);
            for (float[] out : outputs) {
                assertThat(out).isEqualTo(expected);
                assertThat(out[2 * K]).isNaN();
                assertThat(out[4 * K]).isNotNaN();
            }
        }
    }

    @Test
    void ranksThatDisagreeOnTheLanesAreRefusedAtJoin() {
        try (AggregationService service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0),
                "127.0.0.1", 0)) {
            List<CompletableFuture<SwitchMLContext>> joins = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                SwitchMLConfig config = SwitchMLConfig.builder().controller("127.0.0.1:" + service.controllerPort())
                        .job("mixed-lanes").rank(r).workers(2).lanes(r == 0 ? 16 : 32).elementsPerPacket(K)
                        .transport(SwitchMLConfig.Transport.UDP).joinTimeout(Duration.ofSeconds(10)).build();
                joins.add(CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(config)));
            }
            CompletableFuture.anyOf(joins.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
            CompletableFuture<SwitchMLContext> refused = joins.stream().filter(CompletableFuture::isCompletedExceptionally)
                    .findFirst().orElseThrow();
            assertThatThrownBy(refused::join).isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(SwitchMLException.class).hasMessageContaining("laneBits=16")
                    .hasMessageContaining("every worker of a job must be configured alike");
            joins.stream().filter(f -> !f.isCompletedExceptionally()).forEach(f -> f.cancel(true));
        }
    }

    @Test
    void sixteenBitLanesTakeAtMost128Workers() {
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(129).lanes(16).build())
                .hasMessageContaining("switchml.lanes = 16 takes at most 128 workers");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(2).lanes(8).build())
                .hasMessageContaining("switchml.lanes must be 32 or 16, not 8");
    }
}
