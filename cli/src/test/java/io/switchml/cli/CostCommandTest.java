package io.switchml.cli;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.switchml.bench.CostModel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class CostCommandTest {
    private static final long MIB_64 = 64L << 20;

    @Test
    void jsonRowsAreTheModelsTimesAndHierarchiesNeedEnoughWorkers() {
        Run run = Run.of("cost", "--workers", "4,64", "--size", "64MiB", "--rate", "100gbit", "--shards", "8",
                "--leaves", "8", "--alpha", "5", "--format", "json");
        assertThat(run.exitCode()).as(run.err()).isZero();
        JsonObject answer = JsonParser.parseString(run.out()).getAsJsonObject();
        JsonArray rows = answer.getAsJsonArray("rows");
        assertThat(rows).hasSize(2);
        CostModel model = CostModel.of(100e9, 5e-6);
        JsonObject n64 = rows.get(1).getAsJsonObject();
        assertThat(n64.get("workers").getAsInt()).isEqualTo(64);
        assertThat(n64.get("ring_ms").getAsDouble()).isCloseTo(model.ring(64, MIB_64) * 1e3, within(1e-9));
        assertThat(n64.get("sharded_ms").getAsDouble()).isCloseTo(model.shardedSwitch(64, 8, MIB_64) * 1e3, within(1e-9));
        assertThat(n64.get("hierarchy_server_spine_ms").getAsDouble())
                .isCloseTo(model.hierarchy(64, 8, CostModel.Spine.SERVER, MIB_64) * 1e3, within(1e-9));
        assertThat(rows.get(0).getAsJsonObject().has("hierarchy_fabric_spine_ms")).as("8 leaves for 4 workers").isFalse();
        assertThat(answer.get("bandwidth_bound_ms").getAsDouble()).isCloseTo(MIB_64 * 8 / 100e9 * 1e3, within(1e-9));
    }

    @Test
    void theWholeModelModeGivesEachModelsStepThroughTheRingAndTheSwitch() {
        Run run = Run.of("cost", "--model", "vgg16,25.6M", "--compute-ms", "300,120", "--workers", "8", "--rate", "10gbit",
                "--format", "json");
        assertThat(run.exitCode()).as(run.err()).isZero();
        JsonArray rows = JsonParser.parseString(run.out()).getAsJsonObject().getAsJsonArray("rows");
        assertThat(rows).hasSize(2);
        CostModel model = CostModel.of(10e9, 5e-6);
        JsonObject vgg = rows.get(0).getAsJsonObject();
        assertThat(vgg.get("parameters").getAsLong()).isEqualTo(138_357_544L);
        io.switchml.bench.StepModel step = io.switchml.bench.StepModel.ddp(138_357_544L * 4, 0.3);
        assertThat(vgg.get("ring_step_ms").getAsDouble()).isCloseTo(step.stepSeconds(b -> model.ring(8, b)) * 1e3,
                within(1e-9));
        assertThat(vgg.get("speedup").getAsDouble()).isGreaterThan(1.0);
        assertThat(rows.get(1).getAsJsonObject().get("compute_ms").getAsDouble()).isEqualTo(120.0);

        Run missing = Run.of("cost", "--model", "resnet50");
        assertThat(missing.exitCode()).isNotZero();
        assertThat(missing.err()).contains("--model needs --compute-ms");
        Run unknown = Run.of("cost", "--model", "alexnet", "--compute-ms", "1");
        assertThat(unknown.err()).contains("unknown model 'alexnet'", "resnet50", "25.6M");
    }

    @Test
    void tableAndPlotAreWritten(@TempDir Path dir) {
        Path png = dir.resolve("cost.png");
        Run run = Run.of("cost", "--workers", "2,16,10000", "--plot", png.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("workers", "one switch host", "10000");
        assertThat(png).isNotEmptyFile();
        assertThat(Files.isRegularFile(png)).isTrue();
    }

    @Test
    void badInputIsAnErrorThatSaysWhy() {
        Run zero = Run.of("cost", "--workers", "0,4");
        assertThat(zero.exitCode()).isEqualTo(1);
        assertThat(zero.err()).contains("workers must be at least 1, not 0");
        Run rate = Run.of("cost", "--rate", "fast");
        assertThat(rate.exitCode()).isEqualTo(1);
        assertThat(rate.err()).contains("cannot read the rate 'fast'");
        Run format = Run.of("cost", "--format", "xml");
        assertThat(format.err()).contains("--format must be table or json");
    }
}
