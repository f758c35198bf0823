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
        assertThat(EpochReport.parse("ENDPOINT rank=0 worker=127.0.0.1:1")).isNull();
    }

    @Test
    void planSurvivesItsArguments() {
        TrainPlan plan = new TrainPlan(Map.of("switchml.rank", "1", "switchml.workers", "4"), Aggregation.PS, 2, 32, 0.002f,
                9, Path.of("/data"), 1000, 4096);
        assertThat(TrainPlan.parse(plan.toArgs().toArray(String[]::new))).isEqualTo(plan);
        assertThatThrownBy(() -> TrainPlan.parse(new String[]{"epochs"})).hasMessageContaining("not key=value");
        assertThatThrownBy(() -> new TrainPlan(Map.of(), Aggregation.RING, 0, 32, 0.1f, 1, Path.of("/"), 0, 8))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Aggregation.named("allgather")).hasMessageContaining("known: switchml, ring, ps, topk, qsgd, none");
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
