package io.switchml.client;

import io.switchml.controller.AggregationService;
import org.junit.jupiter.api.Test;

import static io.switchml.client.AllReduceExactnessTest.checkFloatSum;
import static io.switchml.client.AllReduceExactnessTest.checkIntSum;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scale on one machine (docs/ARCHITECTURE.md section 9): 64 workers, threads of this JVM, through 8
 * leaf switches of 8 ranks each and a spine; the sums are exact and bit-identical on all 64.
 */
class SixtyFourWorkersThroughEightLeavesTest {
    @Test
    void sixtyFourWorkersGetExactSumsThroughEightLeavesAndASpine() {
        try (LocalCluster cluster = LocalCluster.hierarchy(8, 64, 1, b -> b.elementsPerPacket(256).slotsPerThread(8))) {
            checkFloatSum(cluster, 64, 5_000, 256);
            checkIntSum(cluster, 65, 5_000);
            checkFloatSum(cluster, 66, 1, 256);
            for (AggregationService leaf : cluster.leaves) {
                assertThat(leaf.dataplane().counters().get("spine_results")).isPositive();
            }
        }
    }
}
