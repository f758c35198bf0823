package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Small float32 all-reduces in one round trip (docs/ARCHITECTURE.md section 8): the same bits as the
 * two-round protocol and the reference on every worker, with special values, loss, several worker
 * threads, and jobs that mix one-round and two-round operations; and two rounds where the switch
 * refuses the mode.
 */
class OneRoundTest {
    private static final int K = TestDefaults.ELEMENTS_PER_PACKET;
    /** One packet, a short one, two blocks, and the largest share the default limit sends in one round. */
    private static final int[] SIZES = {1, 7, K, K + 1, 3000, 4096};

    /** Random values with zeros, negative zeros, denormals and a wide range of magnitudes mixed in. */
    private static float[][] specialInputs(long seed, int n, int length) {
        float[][] inputs = TestTensors.floatsByRank(seed, n, length);
        for (int r = 0; r < n; r++) {
            for (int i = r; i < length; i += 5) {
                switch ((i / 5 + r) % 5) {
                    case 0 -> inputs[r][i] = 0f;
                    case 1 -> inputs[r][i] = -0f;
                    case 2 -> inputs[r][i] = Float.MIN_VALUE * (i % 7);
                    case 3 -> inputs[r][i] = Float.MIN_NORMAL * 3;
                    default -> inputs[r][i] = (float) Math.scalb(inputs[r][i], 40);
                }
            }
        }
        // A block of zeros and denormals only, and one of zeros only (exponent -126 both).
        if (length >= 2 * K) {
            for (int r = 0; r < n; r++) {
                for (int i = 0; i < K; i++) {
                    inputs[r][i] = i % 3 == 0 ? Float.MIN_VALUE * i : 0f;
                    inputs[r][K + i] = 0f;
                }
            }
        }
        return inputs;
    }


    private static long counter(LocalCluster cluster, String name) {
        Map<String, Long> counters = cluster.service.dataplane().counters();
        return counters.get(name);
    }

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2, 4})
    void resultsAreTheTwoRoundProtocolsBitForBit(int n) {
        try (LocalCluster oneRound = new LocalCluster(n);
             LocalCluster twoRounds = new LocalCluster(n, 1, b -> b.oneRoundElements(0))) {
            long seed = 100L * n;
            for (int length : SIZES) {
                for (ReduceOp op : ReduceOp.values()) {
                    float[][] inputs = specialInputs(seed++, n, length);
                    long before = counter(oneRound, "one_round_results");
                    List<float[]> one = oneRound.allReduce(inputs, op);
                    List<float[]> two = twoRounds.allReduce(inputs, op);
                    int blocks = (length + K - 1) / K;
                    assertThat(counter(oneRound, "one_round_results") - before).as("one round per block").isEqualTo(blocks);
                    float[] reference = ReferenceAllReduce.floats(inputs, K, op);
                    for (int r = 0; r < n; r++) {
                        assertThat(one.get(r)).as("rank %d, %d elements, %s", r, length, op).isEqualTo(two.get(r))
                                .isEqualTo(one.get(0)).isEqualTo(reference);
                    }
                }
            }
            assertThat(counter(twoRounds, "one_round_results")).isZero();
            assertThat(counter(oneRound, "mismatched_rounds")).isZero();
        }
    }

    @Test
    void aOneRoundAllReduceSendsOnePacketPerBlock() {
        try (LocalCluster cluster = new LocalCluster(2)) {
            float[][] inputs = TestTensors.floatsByRank(5, 2, K + 10);
            WorkerStatistics.Snapshot before = cluster.contexts.get(0).statistics().snapshot();
            cluster.allReduce(inputs, ReduceOp.SUM);
            WorkerStatistics.Snapshot after = cluster.contexts.get(0).statistics().snapshot();
            long fresh = (after.packetsSent() - before.packetsSent()) - (after.retransmissions() - before.retransmissions());
            assertThat(fresh).as("no exponent round").isEqualTo(2);
        }
    }

    @Test
    void int32GoesWithoutABootstrapRoundAtAnySize() {
        try (LocalCluster cluster = new LocalCluster(2)) {
            int length = 100 * K + 3; // beyond one window of 64 slots
            WorkerStatistics.Snapshot before = cluster.contexts.get(0).statistics().snapshot();
            AllReduceExactnessTest.checkIntSum(cluster, 9, length);
            WorkerStatistics.Snapshot after = cluster.contexts.get(0).statistics().snapshot();
            long fresh = (after.packetsSent() - before.packetsSent()) - (after.retransmissions() - before.retransmissions());
            assertThat(fresh).isEqualTo(101);
            assertThat(counter(cluster, "one_round_results")).as("rounds, each of both workers").isEqualTo(101);
        }
    }

    @Test
    void lossAtTheWorkersAndAtTheSwitchLeavesResultsExact() {
        UnaryOperator<SwitchMLConfig.Builder> lossy = b -> b.threads(2).set(SwitchMLConfig.Key.FAULT_DROP_RATE, 0.05)
                .set(SwitchMLConfig.Key.FAULT_DUPLICATE_RATE, 0.05).set(SwitchMLConfig.Key.FAULT_SEED, 3);
        try (LocalCluster cluster = new LocalCluster(4, 2, lossy)) {
            cluster.service.dataplane().setDropProbabilities(0.05, 0.05);
            for (int i = 0; i < 30; i++) {
                int length = SIZES[i % SIZES.length];
                float[][] inputs = specialInputs(7000 + i, 4, length);
                float[] reference = ReferenceAllReduce.floats(inputs, K, ReduceOp.SUM);
                List<float[]> results = cluster.allReduce(inputs, ReduceOp.SUM);
                for (float[] result : results) {
                    assertThat(result).as("all-reduce %d, %d elements", i, length).isEqualTo(reference);
                }
                AllReduceExactnessTest.checkIntSum(cluster, 7000 + i, length * 3);
            }
            assertThat(cluster.statisticsTotals()[1]).as("retransmissions").isPositive();
            assertThat(counter(cluster, "retransmissions_answered")).isPositive();
            assertThat(counter(cluster, "one_round_results")).isPositive();
        }
    }

    @Test
    void aJobMixesOneRoundAndTwoRoundOperationsOfBothTypes() {
        try (LocalCluster cluster = new LocalCluster(3, 2, b -> b.threads(2))) {
            // Float shares of at most 4096 go in one round (8192 = two shares of 4096); larger ones take two.
            int[] lengths = {3000, 40_000, 1, 200_000, 4096 * 2, 4096 * 2 + 1, 77};
            long seed = 1;
            for (int round = 0; round < 2; round++) {
                for (int length : lengths) {
                    AllReduceExactnessTest.checkFloatSum(cluster, seed, length, K);
                    AllReduceExactnessTest.checkIntSum(cluster, seed++, length);
                }
            }
            assertThat(counter(cluster, "one_round_results")).isPositive();
            assertThat(counter(cluster, "mismatched_rounds")).isZero();
        }
    }

    @Test
    void aSwitchThatRefusesTheStagingGetsTwoRoundsAndTheSameResults() {
        try (AggregationService service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0)
                .oneRoundStagingBytes(0), "127.0.0.1", 0);
             LocalCluster cluster = LocalCluster.onSwitch(service, "refused", 2, b -> b);
             LocalCluster oneRound = new LocalCluster(2)) {
            for (int length : SIZES) {
                float[][] inputs = specialInputs(length, 2, length);
                float[] inOneRound = oneRound.allReduce(inputs, ReduceOp.SUM).get(0);
                assertThat(cluster.allReduce(inputs, ReduceOp.SUM)).allSatisfy(r -> assertThat(r).isEqualTo(inOneRound));
            }
            assertThat(service.dataplane().counters()).containsEntry("one_round_results", 0L)
                    .containsEntry("drops_unused_bits", 0L);
            assertThat(counter(oneRound, "one_round_results")).isPositive();
        }
    }
}
