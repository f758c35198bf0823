package io.switchml.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class CostModelTest {
    /** 1 Gbit/s, lossless payload (efficiency 1), no latency: 125 MB take 1 s, so S/B = 1 s. */
    private static final long S = 125_000_000L;
    private static final CostModel IDEAL = new CostModel(1e9, 1e9, 1, 1, 0);
    private static final double EPS = 1e-12;

    @Test
    void ringAndColocatedPsCarryTwoNMinusOneOverNOfTheTensor() {
        assertThat(IDEAL.ring(4, S)).isCloseTo(1.5, within(EPS));
        assertThat(IDEAL.ring(8, S)).isCloseTo(1.75, within(EPS));
        assertThat(IDEAL.colocatedParameterServer(4, S)).isCloseTo(1.5, within(EPS));
        assertThat(IDEAL.ring(1, S)).isZero();
        assertThat(new CostModel(1e9, 1e9, 1, 1, 5e-6).ring(1, S)).isZero();
    }

    @Test
    void theLatencyTermCountsTheRingsSteps() {
        CostModel slow = new CostModel(1e9, 1e9, 1, 0.5, 1e-3);
        // 2 x 3/4 x 2 s (half the wire is payload) + 6 steps x 1 ms
        assertThat(slow.ring(4, S)).isCloseTo(3.006, within(EPS));
        assertThat(slow.colocatedParameterServer(4, S)).isCloseTo(3.002, within(EPS));
        assertThat(slow.fabricSwitch(4, S)).isCloseTo(1.002, within(EPS));
        assertThat(slow.hierarchy(4, 2, CostModel.Spine.FABRIC, S)).isCloseTo(1.004, within(EPS));
    }

    @Test
    void switchesAndDedicatedServersAreBoundByTheirBusiestLink() {
        assertThat(IDEAL.fabricSwitch(64, S)).isCloseTo(1, within(EPS));
        assertThat(IDEAL.switchHost(4, S)).isCloseTo(4, within(EPS));
        assertThat(IDEAL.shardedSwitch(8, 2, S)).isCloseTo(4, within(EPS));
        assertThat(IDEAL.shardedSwitch(8, 8, S)).isEqualTo(IDEAL.fabricSwitch(8, S));
        assertThat(IDEAL.shardedSwitch(8, 16, S)).isEqualTo(IDEAL.fabricSwitch(8, S));
        assertThat(IDEAL.dedicatedParameterServer(8, 2, S)).isCloseTo(4, within(EPS));
        assertThat(IDEAL.dedicatedParameterServer(8, 8, S)).isCloseTo(1, within(EPS));
    }

    @Test
    void theSwitchPathPaysItsHeaders() {
        CostModel mtu9000 = CostModel.of(1e9, 0);
        assertThat(mtu9000.fabricSwitch(4, S)).isCloseTo(8242.0 / 8192, within(EPS));
        assertThat(mtu9000.ring(4, S)).isCloseTo(1.5 / 0.97, within(EPS));
    }

    @Test
    void hierarchyIsTheFabricWithOneLeafAndItsUplinksOrSpineOtherwise() {
        assertThat(IDEAL.hierarchy(16, 1, CostModel.Spine.FABRIC, S)).isEqualTo(IDEAL.fabricSwitch(16, S));
        assertThat(IDEAL.hierarchy(16, 1, CostModel.Spine.SERVER, S)).isEqualTo(IDEAL.fabricSwitch(16, S));
        CostModel slowUplinks = new CostModel(1e9, 0.5e9, 1, 1, 0);
        assertThat(slowUplinks.hierarchy(16, 4, CostModel.Spine.FABRIC, S)).isCloseTo(2, within(EPS));
        assertThat(slowUplinks.hierarchy(16, 4, CostModel.Spine.SERVER, S)).isCloseTo(8, within(EPS));
        CostModel fastUplinks = new CostModel(1e9, 4e9, 1, 1, 0);
        assertThat(fastUplinks.hierarchy(16, 2, CostModel.Spine.SERVER, S)).isCloseTo(1, within(EPS));
    }

    @Test
    void badInputIsRefusedWithTheReason() {
        assertThatThrownBy(() -> IDEAL.ring(0, S)).hasMessageContaining("workers must be at least 1, not 0");
        assertThatThrownBy(() -> IDEAL.shardedSwitch(4, 0, S)).hasMessageContaining("shards must be at least 1");
        assertThatThrownBy(() -> IDEAL.dedicatedParameterServer(4, 0, S)).hasMessageContaining("servers must be at least 1");
        assertThatThrownBy(() -> IDEAL.hierarchy(4, 0, CostModel.Spine.FABRIC, S)).hasMessageContaining("leaves must be at least 1");
        assertThatThrownBy(() -> IDEAL.hierarchy(4, 5, CostModel.Spine.FABRIC, S)).hasMessageContaining("cannot have 5 leaves");
        assertThatThrownBy(() -> IDEAL.ring(4, -1)).hasMessageContaining("tensor size must be >= 0");
        assertThatThrownBy(() -> new CostModel(0, 1e9, 1, 1, 0)).hasMessageContaining("link rate must be a finite number > 0");
        assertThatThrownBy(() -> new CostModel(1e9, -1, 1, 1, 0)).hasMessageContaining("uplink rate");
        assertThatThrownBy(() -> new CostModel(1e9, 1e9, 1.5, 1, 0)).hasMessageContaining("switch payload efficiency must be in (0, 1]");
        assertThatThrownBy(() -> new CostModel(1e9, 1e9, 1, 0, 0)).hasMessageContaining("TCP payload efficiency");
        assertThatThrownBy(() -> new CostModel(1e9, 1e9, 1, 1, Double.NaN)).hasMessageContaining("alpha");
    }

    @Test
    void topologiesEvaluateTheirFormulaAndSkipImpossibleHierarchies() {
        assertThat(CostTopology.SHARDED.seconds(IDEAL, 8, S, 2, 1)).isEqualTo(IDEAL.shardedSwitch(8, 2, S));
        assertThat(CostTopology.HIERARCHY_SERVER_SPINE.applies(4, 8)).isFalse();
        assertThat(CostTopology.RING.applies(4, 8)).isTrue();
    }
}
