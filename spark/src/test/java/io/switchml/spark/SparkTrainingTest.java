package io.switchml.spark;

import ai.djl.Model;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import io.switchml.djl.ParameterChecksum;
import io.switchml.training.Aggregation;
import io.switchml.training.Classifier;
import io.switchml.training.FashionMnist;
import io.switchml.training.TrainPlan;
import io.switchml.training.TrainRunner;
import io.switchml.training.TrainingSummary;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** DJL training from a Dataset of rows, ranks as tasks of one barrier stage in local mode (threads of this JVM). */
class SparkTrainingTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        TrainRunner.quietOfflineEngine();
        spark = LocalSpark.start("local[2]");
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    @ParameterizedTest
    @ValueSource(strings = {"switchml", "ring"})
    void twoRanksTrainOnTheirPartitionsAndEndWithIdenticalParameters(String name) {
        Aggregation aggregation = Aggregation.named(name);
        FashionMnist.Split train = FashionMnist.train(FashionMnist.DEFAULT_DIRECTORY).first(3000);
        Dataset<Row> rows = FashionMnistRows.of(spark, train);
        TrainPlan plan = new TrainPlan(Map.of(), aggregation, 1, 32, 0.002f, 3, FashionMnist.DEFAULT_DIRECTORY, 0, 64 << 10);
        SparkTrainingResult result = SparkTraining.train(rows, FashionMnist.test(FashionMnist.DEFAULT_DIRECTORY), plan, 2,
                BarrierOptions.defaults().withTimeout(Duration.ofMinutes(3)), TrainingSummary.DEFAULT_TARGET);

        TrainingSummary summary = result.summary();
        assertThat(summary.parametersIdentical()).isTrue();
        assertThat(summary.workers()).isEqualTo(2);
        assertThat(summary.epochs()).hasSize(1);
        assertThat(summary.epochs().get(0).images()).isEqualTo(2 * (1500 / 32) * 32); // both halves, whole batches
        assertThat(summary.testAccuracy()).isGreaterThan(0.6); // ten classes: chance is 0.1
        // The driver's copy of rank 0's parameters loads into the classifier and is what every rank held.
        try (Model model = Model.newInstance("loaded")) {
            Block block = Classifier.mlp();
            model.setBlock(block);
            block.initialize(model.getNDManager(), ai.djl.ndarray.types.DataType.FLOAT32, new Shape(1, FashionMnist.PIXELS));
            result.parameters().loadInto(model.getNDManager(), block);
            assertThat(ParameterChecksum.of(block)).isEqualTo(result.parameters().checksum());
        }
    }
}
