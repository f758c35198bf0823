package io.switchml.training;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import io.switchml.collectives.Compression;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * Which optimizer each aggregation trains with, where the momentum is done (the top-k compressor for
 * topk with momentum SGD, DJL's optimizer otherwise), and the update each applies, worked by hand.
 */
class TrainOptimizerTest {
    @BeforeAll
    static void offline() {
        TrainRunner.quietOfflineEngine();
    }

    @Test
    void topKTrainsWithMomentumSgdAndTheOthersWithAdam() {
        assertThat(TrainOptimizer.defaultFor(Aggregation.named("topk")))
                .isEqualTo(new TrainOptimizer(TrainOptimizer.Kind.SGD, 0.9f, TrainOptimizer.Schedule.COSINE));
        for (Aggregation a : new Aggregation[]{Aggregation.switchMl(), Aggregation.named("ring"), Aggregation.named("ps"), Aggregation.named("qsgd"),
                Aggregation.NONE}) {
            assertThat(TrainOptimizer.defaultFor(a)).as("%s", a).isEqualTo(TrainOptimizer.ADAM);
        }
        assertThat(TrainOptimizer.Kind.ADAM.defaultLearningRate()).isEqualTo(0.001f);
        assertThat(TrainOptimizer.Kind.SGD.defaultLearningRate()).isEqualTo(0.1f);
    }

    @Test
    void onlyTopKWithMomentumSgdMovesTheMomentumIntoTheCompressor() {
        Compression settings = Compression.DEFAULTS.withRatio(0.02);
        TrainOptimizer sgd = TrainOptimizer.sgd(0.9f);
        assertThat(sgd.compression(settings, Aggregation.named("topk"))).isEqualTo(settings.withMomentum(0.9f));
        assertThat(sgd.compression(settings, Aggregation.named("topk")).momentumFactor()).isEqualTo(0.9f);
        assertThat(sgd.compression(settings, Aggregation.named("ring"))).isEqualTo(settings);
        assertThat(sgd.compression(settings, Aggregation.named("qsgd"))).isEqualTo(settings);
        assertThat(TrainOptimizer.ADAM.compression(settings, Aggregation.named("topk"))).isEqualTo(settings);
        assertThat(TrainOptimizer.sgd(0).compression(settings, Aggregation.named("topk"))).isEqualTo(settings);
        assertThat(sgd.describe(0.1f, Aggregation.named("topk")))
                .isEqualTo("sgd, lr 0.1 cosine, momentum 0.9 (corrected in the top-k compressor, DGC)");
        assertThat(sgd.describe(0.1f, Aggregation.named("ring"))).isEqualTo("sgd, lr 0.1 cosine, momentum 0.9");
        assertThat(TrainOptimizer.ADAM.describe(0.001f, Aggregation.named("topk"))).isEqualTo("adam, lr 0.001 fixed");
    }

    /** Two steps of the gradient (1, -2) from weights (1, 1) at a fixed rate of 0.1. */
    private static float[] twoSteps(TrainOptimizer o, Aggregation a) {
        TrainOptimizer fixed = new TrainOptimizer(o.kind(), o.momentum(), TrainOptimizer.Schedule.FIXED);
        Optimizer optimizer = fixed.build(0.1f, a, 100);
        try (NDManager manager = NDManager.newBaseManager("PyTorch")) {
            NDArray weight = manager.create(new float[]{1f, 1f});
            for (int t = 0; t < 2; t++) {
                optimizer.update("w", weight, manager.create(new float[]{1f, -2f}));
            }
            return weight.toFloatArray();
        }
    }

    @Test
    void momentumSgdAccumulatesTheGradientUnlessTheCompressorDoes() {
        // Heavy ball, u = 0.9 u + g, w = w - 0.1 u: u is g, then 1.9 g, so w moves by 0.29 g.
        assertThat(twoSteps(TrainOptimizer.sgd(0.9f), Aggregation.named("ring"))).containsExactly(
                new float[]{1f - 0.29f, 1f + 0.58f}, within(1e-6f));
        // With topk the compressor sends the velocity's mass, so the optimizer is plain SGD: w moves by 0.2 g.
        assertThat(twoSteps(TrainOptimizer.sgd(0.9f), Aggregation.named("topk"))).containsExactly(
                new float[]{1f - 0.2f, 1f + 0.4f}, within(1e-6f));
    }

    @Test
    void theCosineScheduleFallsFromTheRateToZeroOverTheRun() {
        Tracker cosine = TrainOptimizer.sgd(0.9f).tracker(0.1f, 200);
        assertThat(cosine.getNewValue(0)).isEqualTo(0.1f, within(1e-7f));
        assertThat(cosine.getNewValue(100)).isEqualTo(0.05f, within(1e-7f));
        assertThat(cosine.getNewValue(200)).isEqualTo(0f, within(1e-7f));
        assertThat(TrainOptimizer.ADAM.tracker(0.001f, 200).getNewValue(150)).isEqualTo(0.001f);
        assertThatThrownBy(() -> TrainOptimizer.ADAM.build(0.001f, Aggregation.named("ring"), 0))
                .hasMessageContaining("at least one step");
    }

    @Test
    void settingsTravelAsOneWordAndBadOnesAreRefused() {
        for (TrainOptimizer o : new TrainOptimizer[]{TrainOptimizer.ADAM, TrainOptimizer.sgd(0.9f),
                TrainOptimizer.of(TrainOptimizer.Kind.SGD, 0.5f, TrainOptimizer.Schedule.FIXED),
                TrainOptimizer.of(TrainOptimizer.Kind.ADAM, 0.9f, TrainOptimizer.Schedule.COSINE)}) {
            assertThat(TrainOptimizer.parse(o.toSpec())).isEqualTo(o);
        }
        assertThat(TrainOptimizer.sgd(0.9f).toSpec()).isEqualTo("sgd:0.9:cosine");
        assertThatThrownBy(() -> TrainOptimizer.parse("sgd")).hasMessageContaining("not kind:momentum:schedule");
        assertThatThrownBy(() -> TrainOptimizer.sgd(1)).hasMessageContaining("momentum 1.0 must be in [0, 1)");
        assertThatThrownBy(() -> new TrainOptimizer(TrainOptimizer.Kind.ADAM, 0.9f, TrainOptimizer.Schedule.FIXED))
                .hasMessageContaining("adam takes no momentum");
        assertThatThrownBy(() -> TrainOptimizer.Kind.named("lamb")).hasMessageContaining("known: adam, sgd");
        assertThatThrownBy(() -> TrainOptimizer.Schedule.named("step")).hasMessageContaining("known: fixed, cosine");
    }
}
