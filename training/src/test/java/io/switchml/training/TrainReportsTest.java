package io.switchml.training;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TrainReportsTest {
    @Test
    void reportsSurviveTheirLines() {
        EpochReport e = new EpochReport(2, 3, 234, 14976, 0.5, 0.8, 12.5, 4.25, Double.NaN);
        assertThat(EpochReport.parse(e.toLine())).isEqualTo(e);
        FinalReport f = new FinalReport(0, 0xfedcba9876543210L, 0.875);
        assertThat(FinalReport.parse(f.toLine())).isEqualTo(f);
        assertThat(EpochReport.parse("ENDPOINT {\"rank\":0,\"worker\":\"127.0.0.1:1\"}")).isNull();
        assertThat(e.toLine()).as("NaN as JSON's extension").endsWith("\"testAccuracy\":NaN}");
        EpochReport precise = new EpochReport(0, 1, 1, 1, 0.1 + 0.2, 1.0 / 3, 1e-9, 0, 0.5);
        assertThat(EpochReport.parse(precise.toLine())).as("every bit, not six decimals").isEqualTo(precise);
    }

    @Test
    void planSurvivesItsJson() {
        TrainPlan plan = new TrainPlan(Map.of("switchml.rank", "1", "switchml.workers", "4"), Aggregation.named("ps"), 2, 32, 0.002f,
                9, Path.of("/data"), 1000, 4096);
        assertThat(TrainPlan.fromJson(plan.toJson())).isEqualTo(plan);
        TrainPlan topk = plan.withAggregation(Aggregation.named("topk"));
        TrainPlan compressed = new TrainPlan(topk.config(), Aggregation.named("qsgd"), 2, 32, 0.002f, 9, Path.of("/data"), 1000, 4096,
                io.switchml.collectives.Compression.DEFAULTS.withLevels(127).withRatio(0.05));
        assertThat(TrainPlan.fromJson(compressed.toJson())).isEqualTo(compressed);
        assertThat(topk.optimizer()).isEqualTo(TrainOptimizer.ADAM); // withAggregation keeps the plan's optimizer
        TrainPlan dgc = topk.withAggregation(Aggregation.named("topk"), TrainOptimizer.sgd(0.9f), 0.1f);
        assertThat(TrainPlan.fromJson(dgc.toJson())).isEqualTo(dgc);
        assertThat(dgc.effectiveCompression().momentum()).isEqualTo(0.9f);
        assertThat(dgc.withAggregation(Aggregation.named("ring")).effectiveCompression().momentum()).isZero();
        assertThat(new TrainPlan(Map.of(), Aggregation.named("topk"), 1, 32, 0.1f, 1, Path.of("/"), 0, 8).optimizer())
                .isEqualTo(TrainOptimizer.defaultFor(Aggregation.named("topk")));
        assertThatThrownBy(() -> new TrainPlan(Map.of(), Aggregation.named("topk"), 1, 32, 0.1f, 1, Path.of("/"), 0, 8,
                io.switchml.collectives.Compression.DEFAULTS.withMomentum(0.5)))
                .hasMessageContaining("momentum correction follows the optimizer");
        assertThat(topk.aggregation().exchangesEndpoints()).isTrue();
        assertThat(Aggregation.switchMl().exchangesEndpoints()).isFalse();
        assertThat(Aggregation.NONE.exchangesEndpoints()).isFalse();
        assertThatThrownBy(() -> TrainPlan.fromArguments(new String[]{"epochs=1"})).hasMessageContaining("training worker: the plan is not a TrainPlan in JSON");
        assertThatThrownBy(() -> TrainPlan.fromArguments(new String[0])).hasMessageContaining("takes one argument, its plan in JSON");
        assertThatThrownBy(() -> new TrainPlan(Map.of(), Aggregation.named("ring"), 0, 32, 0.1f, 1, Path.of("/"), 0, 8))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Aggregation.named("allgather")).hasMessageContaining("known: switchml, ring, ps, topk, qsgd, none");
    }

    @Test
    void timeToTargetIsTheStepTimeUpToTheFirstEpochThatReachedIt() {
        List<TrainingSummary.EpochSummary> epochs = List.of(
                new TrainingSummary.EpochSummary(1, 100, 0.6, 0.7, 0.78, 10, 0.5, 10.0),
                new TrainingSummary.EpochSummary(2, 100, 0.5, 0.8, 0.83, 10, 0.5, 12.0),
                new TrainingSummary.EpochSummary(3, 100, 0.4, 0.8, 0.81, 10, 0.5, 11.0));
        TrainingSummary s = new TrainingSummary("topk", 4, 3, 64, 0.81, 10, 0.5, true, 40, epochs, 100_000_000L, 0.82);
        assertThat(s.secondsToTarget()).isEqualTo(22.0);
        assertThat(s.epochsToTarget()).isEqualTo(2);
        assertThat(s.toJson()).contains("\"rate_bps\": 100000000", "\"target_accuracy\": 0.820000", "\"seconds_to_target\": 22.0000");
        TrainingSummary never = new TrainingSummary("topk", 4, 3, 64, 0.81, 10, 0.5, true, 40, epochs, null, 0.9);
        assertThat(never.secondsToTarget()).isNaN();
        assertThat(never.epochsToTarget()).isZero();
        assertThat(never.toJson()).contains("\"rate_bps\": null", "\"seconds_to_target\": null");
        assertThat(TrainPlot.rate(100_000_000L)).isEqualTo("100 Mbit/s");
        assertThat(TrainPlot.rate(1_000_000_000L)).isEqualTo("1 Gbit/s");
    }

    @Test
    void theComparisonPlotIsAPng(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        List<TrainingSummary.EpochSummary> epochs = List.of(new TrainingSummary.EpochSummary(1, 100, 0.6, 0.7, 0.85, 10, 0.5, 10.0));
        List<TrainingSummary> runs = List.of(
                new TrainingSummary("ring", 4, 1, 64, 0.85, 10, 0.5, true, 20, epochs, 100_000_000L, 0.82),
                new TrainingSummary("topk", 4, 1, 64, 0.85, 10, 0.5, true, 20, epochs, 1_000_000_000L, 0.9));
        Path png = dir.resolve("train.png");
        TrainPlot.write(runs, png);
        java.awt.image.BufferedImage image = javax.imageio.ImageIO.read(png.toFile());
        assertThat(image.getWidth()).isEqualTo(900);
        assertThatThrownBy(() -> TrainPlot.write(List.of(), png)).hasMessageContaining("no training runs");
    }

    @Test
    void epochSummaryAveragesOverWorkers() {
        TrainingSummary.EpochSummary s = TrainingSummary.EpochSummary.of(List.of(
                new EpochReport(0, 1, 10, 100, 0.4, 0.9, 10, 5, 0.85),
                new EpochReport(1, 1, 10, 100, 0.6, 0.7, 8, 2, Double.NaN)));
        assertThat(s.images()).isEqualTo(200);
        assertThat(s.loss()).isEqualTo(0.5, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(s.accuracy()).isEqualTo(0.8, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(s.testAccuracy()).isEqualTo(0.85);
        assertThat(s.imagesPerSecond()).isEqualTo(20); // 200 images in the slower worker's 10 s
        assertThat(s.aggregationFraction()).isEqualTo((0.5 + 0.25) / 2, org.assertj.core.data.Offset.offset(1e-12));
    }
}
