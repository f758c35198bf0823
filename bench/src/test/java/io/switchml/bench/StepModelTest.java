package io.switchml.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class StepModelTest {
    @Test
    void ddpBucketsAreOneMebibyteThenTwentyFive() {
        assertThat(StepModel.ddpBuckets(100L << 20)).containsExactly(1L << 20, 25L << 20, 25L << 20, 25L << 20, 24L << 20);
        assertThat(StepModel.ddpBuckets(1000)).containsExactly(1000L);
        assertThatThrownBy(() -> StepModel.ddpBuckets(0)).hasMessageContaining("at least 1");
    }

    @Test
    void communicationHidesBehindTheBackwardUntilItIsLonger() {
        // 3 s of compute: 1 s forward, 2 s backward; two buckets of equal size, ready at 2 s and 3 s.
        StepModel step = new StepModel(List.of(100L, 100L), 3.0, 2.0 / 3);
        assertThat(step.stepSeconds(b -> 0.0)).isCloseTo(3.0, within(1e-12));
        // 0.5 s each: the first ends at 2.5 s, the second starts when ready (3 s) and ends at 3.5 s: the last is exposed.
        assertThat(step.stepSeconds(b -> 0.5)).isCloseTo(3.5, within(1e-12));
        // 2 s each: the first 2..4 s, the second 4..6 s.
        assertThat(step.stepSeconds(b -> 2.0)).isCloseTo(6.0, within(1e-12));
        assertThat(step.exposedShare(b -> 2.0)).isCloseTo(0.5, within(1e-12));
    }

    @Test
    void aFasterAllReduceGivesASpeedupThatGrowsWithTheCommunicationShare() {
        CostModel tenGbit = CostModel.of(10e9, 5e-6);
        // VGG-16's gradients (138.4 M float32 parameters) against ResNet-50's (25.6 M), at a compute time each.
        StepModel vgg = StepModel.ddp(138_357_544L * 4, 0.3);
        StepModel resnet = StepModel.ddp(25_557_032L * 4, 0.3);
        int n = 8;
        double vggSpeedup = vgg.stepSeconds(b -> tenGbit.ring(n, b)) / vgg.stepSeconds(b -> tenGbit.fabricSwitch(n, b));
        double resnetSpeedup = resnet.stepSeconds(b -> tenGbit.ring(n, b)) / resnet.stepSeconds(b -> tenGbit.fabricSwitch(n, b));
        assertThat(vggSpeedup).isGreaterThan(resnetSpeedup).isGreaterThan(1.0)
                .isLessThanOrEqualTo(2.0 * (n - 1) / n / (CostModel.TCP_EFFICIENCY / CostModel.SWITCH_EFFICIENCY_MTU_9000) + 1e-9);
        assertThat(resnetSpeedup).isGreaterThanOrEqualTo(1.0);
    }
}
