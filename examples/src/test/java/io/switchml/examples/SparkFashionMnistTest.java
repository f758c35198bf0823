package io.switchml.examples;

import io.switchml.spark.BarrierOptions;
import io.switchml.spark.SparkSessions;
import io.switchml.spark.SparkTrainingResult;
import io.switchml.training.FashionMnist;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The Spark code of docs/spark.md, run in local mode: two barrier tasks as threads of this JVM. */
class SparkFashionMnistTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        System.setProperty("ai.djl.offline", "true");
        spark = SparkSession.builder().master("local[2]").appName("examples").config(SparkSessions.loopbackDriver())
                .getOrCreate();
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    @Test
    void theTrainingSnippetTrainsTwoRanksToIdenticalParameters() {
        SparkTrainingResult result = SparkFashionMnist.train(spark, FashionMnist.DEFAULT_DIRECTORY, 2, 2000);
        assertThat(result.summary().parametersIdentical()).isTrue();
        assertThat(result.summary().testAccuracy()).isGreaterThan(0.5); // 2000 images, one epoch; chance is 0.1
        assertThat(result.parameters().parameters()).isNotEmpty();
    }

    @Test
    void theBarrierSnippetGivesEveryRankTheTotal() {
        List<Long> totals = SparkFashionMnist.partitionSums(JavaSparkContext.fromSparkContext(spark.sparkContext())
                .parallelize(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 2), BarrierOptions.defaults().withTimeout(Duration.ofMinutes(2)));
        assertThat(totals).containsExactly(55L, 55L);
    }
}
