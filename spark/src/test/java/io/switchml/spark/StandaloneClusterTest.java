package io.switchml.spark;

import io.switchml.api.ReduceOp;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import io.switchml.training.Aggregation;
import io.switchml.training.FashionMnist;
import io.switchml.training.TrainPlan;
import io.switchml.training.TrainingSummary;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real standalone cluster: a Master and two Worker processes started from the Maven jars, one core each, so
 * every rank runs in its own executor JVM.
 */
class StandaloneClusterTest {
    private static StandaloneCluster cluster;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws Exception {
        cluster = new StandaloneCluster(2, 1, "1536m");
        SparkTrainRunner.Options options = options(cluster.masterUrl(), plan(0));
        SparkSession.Builder builder = SparkSession.builder().master(cluster.masterUrl()).appName("switchml-cluster-test");
        SparkTrainRunner.sessionConf(options).forEach(builder::config);
        spark = builder.config("spark.executor.memory", "1g").config("spark.cores.max", "2").getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static TrainPlan plan(int limit) {
        return new TrainPlan(Map.of(), Aggregation.switchMl(), 1, 16, 0.001f, 1, FashionMnist.DEFAULT_DIRECTORY, limit, 64 << 10);
    }

    private static SparkTrainRunner.Options options(String master, TrainPlan plan) {
        return new SparkTrainRunner.Options(master, 2, plan, null, "127.0.0.1", Duration.ofMinutes(4), 0.8, Map.of());
    }

    @Test
    void twoExecutorsTrainOneEpochToEightyPercentWithIdenticalParameters() {
        FashionMnist.Split train = FashionMnist.train(FashionMnist.DEFAULT_DIRECTORY).first(20000);
        SparkTrainingResult result = SparkTraining.train(FashionMnistRows.of(spark, train),
                FashionMnist.test(FashionMnist.DEFAULT_DIRECTORY), plan(0), 2,
                BarrierOptions.defaults().withTimeout(Duration.ofMinutes(4)), 0.8);
        TrainingSummary summary = result.summary();
        System.err.println(summary.toJson());
        assertThat(summary.parametersIdentical()).isTrue();
        assertThat(summary.testAccuracy()).isGreaterThanOrEqualTo(0.8);
        assertThat(result.parameters().parameters()).isNotEmpty();
    }

    @Test
    void anExecutorKilledOnTheFirstAttemptFailsTheStageAndTheRetryFinishes() {
        AggregationService service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0),
                "127.0.0.1", 0);
        try {
            JavaRDD<Integer> numbers = JavaSparkContext.fromSparkContext(spark.sparkContext())
                    .parallelize(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 2);
            BarrierOptions options = BarrierOptions.defaults().withController("127.0.0.1:" + service.controllerPort())
                    .withTimeout(Duration.ofMinutes(3));
            List<String> outcomes = BarrierAllReduce.run(numbers, options, (rank, partition) -> {
                int[] sum = {0};
                partition.forEachRemaining(i -> sum[0] += i);
                rank.allReduce().allReduce(sum, ReduceOp.SUM);
                if (rank.attempt() == 0 && rank.rank() == 1) {
                    Runtime.getRuntime().halt(137); // the executor dies mid-job, as if killed
                }
                rank.allReduce().barrier();
                return rank.job() + " sum=" + sum[0] + " pid=" + ProcessHandle.current().pid();
            });
            assertThat(outcomes).hasSize(2).allSatisfy(o -> assertThat(o).contains("-attempt1 sum=55"));
            // Two executor JVMs, not threads of one.
            assertThat(outcomes.get(0).replaceAll(".* pid=", "")).isNotEqualTo(outcomes.get(1).replaceAll(".* pid=", ""));
            assertThat(service.dataplane().slotPool().jobs()).isZero();
            assertThat(service.pendingJoins()).isZero();
        } finally {
            service.close();
        }
    }
}
