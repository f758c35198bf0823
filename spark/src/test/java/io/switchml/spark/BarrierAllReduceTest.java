package io.switchml.spark;

import io.switchml.api.ReduceOp;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Ranks as tasks of one barrier stage in local mode (tasks as threads of this JVM). */
class BarrierAllReduceTest {
    private static SparkSession spark;
    private static JavaSparkContext context;

    @BeforeAll
    static void start() {
        spark = LocalSpark.start("local[2]"); // 2 slots
        context = JavaSparkContext.fromSparkContext(spark.sparkContext());
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    /** Each rank all-reduces its partition's sum; every rank must get the total. */
    static int[] sumOfPartitionSums(RankContext rank, java.util.Iterator<Integer> partition) {
        int sum = 0;
        while (partition.hasNext()) {
            sum += partition.next();
        }
        int[] ints = new int[16];
        for (int i = 0; i < ints.length; i++) {
            ints[i] = sum + i;
        }
        rank.allReduce().allReduce(ints, ReduceOp.SUM);
        return new int[]{rank.rank(), rank.workers(), rank.attempt(), ints[0], ints[15]};
    }

    private static JavaRDD<Integer> numbers(int n, int partitions) {
        List<Integer> list = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            list.add(i);
        }
        return context.parallelize(list, partitions);
    }

    @Test
    void everyRankGetsTheSumThroughAnEmbeddedSwitch() {
        List<int[]> results = BarrierAllReduce.run(numbers(100, 2), BarrierOptions.defaults().withTimeout(Duration.ofMinutes(2)),
                BarrierAllReduceTest::sumOfPartitionSums);
        assertThat(results).hasSize(2);
        for (int r = 0; r < 2; r++) {
            assertThat(results.get(r)).containsExactly(r, 2, 0, 5050, 5050 + 2 * 15);
        }
    }

    /** What all-reduce a rank got, and its float sum of the partition's values. */
    static String[] throughWhatAndFloatSum(RankContext rank, java.util.Iterator<Integer> partition) {
        float[] sum = new float[3];
        while (partition.hasNext()) {
            sum[0] += partition.next() * 0.5f;
        }
        rank.allReduce().allReduce(sum, ReduceOp.SUM);
        return new String[]{rank.allReduce().getClass().getSimpleName(), String.valueOf(sum[0])};
    }

    @Test
    void theTasksOfOneExecutorSumThroughOneAgentAsOneContribution() {
        List<String[]> results = BarrierAllReduce.run(numbers(100, 2), BarrierOptions.defaults().withTimeout(Duration.ofMinutes(2)),
                BarrierAllReduceTest::throughWhatAndFloatSum);
        for (String[] r : results) {
            assertThat(r).as("local mode: one executor, one agent").containsExactly("AgentClient", "2525.0");
        }
    }

    @Test
    void theRingAndTheParameterServerGiveTheSameSums() {
        for (String algorithm : List.of("ring", "ps")) {
            List<int[]> results = BarrierAllReduce.run(numbers(100, 2),
                    BarrierOptions.defaults().withAlgorithm(algorithm).withTimeout(Duration.ofMinutes(2)),
                    BarrierAllReduceTest::sumOfPartitionSums);
            assertThat(results).as(algorithm).extracting(r -> r[3]).containsExactly(5050, 5050);
        }
    }

    @Test
    void aRankThatDiesOnTheFirstAttemptFailsItAndTheRetriedStageFormsANewJob() {
        AggregationService service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0),
                "127.0.0.1", 0);
        try {
            BarrierOptions options = BarrierOptions.defaults().withController("127.0.0.1:" + service.controllerPort())
                    .withTimeout(Duration.ofMinutes(2));
            List<String> jobs = BarrierAllReduce.run(numbers(10, 2), options, (rank, partition) -> {
                int[] first = sumOfPartitionSums(rank, partition); // mid-work: one all-reduce done
                if (rank.attempt() == 0 && rank.rank() == 1) {
                    throw new IllegalStateException("rank 1 dies on attempt 0 after " + first[3]);
                }
                rank.allReduce().barrier();
                return rank.job() + " attempt=" + rank.attempt();
            });
            assertThat(jobs).hasSize(2).allSatisfy(j -> assertThat(j).endsWith("-attempt1 attempt=1"));
            assertThat(jobs.get(0)).isEqualTo(jobs.get(1));
            // The failed attempt's job and the finished one's are gone from the switch.
            assertThat(service.dataplane().slotPool().jobs()).isZero();
            assertThat(service.pendingJoins()).isZero();
        } finally {
            service.close();
        }
    }

    @Test
    void aRankThatFailsOnEveryAttemptFailsTheRunWithItsError() {
        assertThatThrownBy(() -> BarrierAllReduce.run(numbers(10, 2), BarrierOptions.defaults().withTimeout(Duration.ofMinutes(2)),
                (rank, partition) -> {
                    if (rank.rank() == 1) {
                        throw new IllegalStateException("rank 1 cannot go on");
                    }
                    rank.allReduce().barrier(); // rank 0 waits for rank 1 until the switch says it left
                    return rank.rank();
                }))
                .isInstanceOf(BarrierStageException.class)
                .hasMessageContaining("failed the maximum allowable number of times")
                // Spark reports the last task failure it saw: rank 1's own, or rank 0's news that rank 1 left.
                .satisfiesAnyOf(e -> assertThat(e).hasMessageContaining("rank 1 cannot go on"),
                        e -> assertThat(e).hasMessageContaining("rank 1 left job"));
    }

    @Test
    void aStageThatOutlivesTheTimeoutIsCancelledAndSaysSo() {
        assertThatThrownBy(() -> BarrierAllReduce.run(numbers(10, 2), BarrierOptions.defaults().withTimeout(Duration.ofSeconds(3)),
                (rank, partition) -> {
                    if (rank.rank() == 1) {
                        Thread.sleep(60_000); // hangs; the cancellation interrupts it
                    }
                    rank.allReduce().barrier();
                    return rank.rank();
                }))
                .isInstanceOf(BarrierStageException.class)
                .hasMessageContaining("did not finish within PT3S; cancelled it");
    }

    @Test
    void aStageWithMoreTasksThanSlotsFailsWithSparksMessage() {
        assertThatThrownBy(() -> BarrierAllReduce.run(numbers(10, 3), BarrierOptions.defaults()
                .withTimeout(Duration.ofMinutes(2)), BarrierAllReduceTest::sumOfPartitionSums))
                .isInstanceOf(BarrierStageException.class)
                .hasMessageContaining("Barrier execution mode does not allow run a barrier stage that requires more slots");
    }
}
