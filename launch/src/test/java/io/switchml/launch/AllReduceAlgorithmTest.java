package io.switchml.launch;

import io.switchml.collectives.Compression;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The registry of algorithms: what it holds, how names resolve, what each says of itself, and plans that name one. */
class AllReduceAlgorithmTest {
    /** A plan naming an algorithm, as worker plans do. */
    record Plan(AllReduceAlgorithm algorithm, int size) {
    }

    @Test
    void theBuiltInsAreRegisteredOnceSwitchMlFirst() {
        assertThat(AllReduceAlgorithm.all()).extracting(AllReduceAlgorithm::id)
                .containsExactly("switchml", "ring", "ps", "topk", "qsgd");
        assertThat(AllReduceAlgorithm.ids()).isEqualTo("switchml, ring, ps, topk, qsgd");
        assertThat(AllReduceAlgorithm.named(" TopK ")).isSameAs(AllReduceAlgorithm.named("topk"));
        assertThat(AllReduceAlgorithm.switchMl()).isInstanceOf(SwitchMlAlgorithm.class);
        assertThatThrownBy(() -> AllReduceAlgorithm.named("allgather"))
                .hasMessage("unknown all-reduce algorithm 'allgather'; known: switchml, ring, ps, topk, qsgd");
        assertThatThrownBy(() -> AllReduceAlgorithm.named(null)).hasMessageContaining("unknown all-reduce algorithm 'null'");
    }

    @Test
    void eachSaysWhatItNeedsAndDoes() {
        AllReduceAlgorithm switchMl = AllReduceAlgorithm.named("switchml");
        assertThat(switchMl.needsSwitch()).isTrue();
        assertThat(switchMl.exchangesEndpoints()).isFalse();
        for (String tcp : new String[]{"ring", "ps", "topk", "qsgd"}) {
            AllReduceAlgorithm a = AllReduceAlgorithm.named(tcp);
            assertThat(a.needsSwitch()).as(tcp).isFalse();
            assertThat(a.exchangesEndpoints()).as(tcp).isTrue();
            assertThat(a.summary()).as(tcp).isNotBlank();
        }
        assertThat(AllReduceAlgorithm.all()).filteredOn(AllReduceAlgorithm::compressed).extracting(AllReduceAlgorithm::id)
                .containsExactly("topk", "qsgd");
        assertThat(AllReduceAlgorithm.all()).filteredOn(AllReduceAlgorithm::correctsMomentum)
                .extracting(AllReduceAlgorithm::id).containsExactly("topk");
        assertThat(AllReduceAlgorithm.named("topk").describe(Compression.DEFAULTS.withRatio(0.01))).contains("top-k 1");
        assertThat(AllReduceAlgorithm.named("qsgd").describe(Compression.DEFAULTS)).startsWith("QSGD");
        assertThat(AllReduceAlgorithm.named("ring").describe(Compression.DEFAULTS)).isNull();
        assertThat(switchMl.describe(Compression.DEFAULTS)).isNull();
    }

    @Test
    void exactSumsFollowEachAlgorithmsRounding() {
        ExactSum.Context context = new ExactSum.Context(4, 256, 32, Compression.DEFAULTS.withBucket(100), 3);
        assertThat(AllReduceAlgorithm.switchMl().exactSum(context)).isInstanceOfSatisfying(ExactSum.Blockwise.class,
                b -> assertThat(b.blockElements()).as("one packet's block").isEqualTo(256));
        ExactSum.Context lanes16 = new ExactSum.Context(4, 256, 16, Compression.DEFAULTS, 1);
        assertThat(AllReduceAlgorithm.switchMl().exactSum(lanes16)).isInstanceOfSatisfying(ExactSum.Blockwise.class,
                b -> assertThat(b.blockElements()).as("two values per element").isEqualTo(512));
        assertThat(AllReduceAlgorithm.named("qsgd").exactSum(context)).isInstanceOfSatisfying(ExactSum.Blockwise.class,
                b -> assertThat(b.blockElements() % 100).as("whole buckets").isZero());
        assertThat(AllReduceAlgorithm.named("topk").exactSum(context)).as("selection spans the tensor")
                .isInstanceOf(ExactSum.Whole.class);
        assertThatThrownBy(() -> new ExactSum.Context(0, 256, 32, Compression.DEFAULTS, 1))
                .hasMessageContaining("at least one worker");
    }

    @Test
    void plansNameTheirAlgorithmAndAreRefusedForAnUnknownOne() {
        Plan plan = new Plan(AllReduceAlgorithm.named("ps"), 4);
        String json = PlanJson.write(plan);
        assertThat(json).isEqualTo("{\"algorithm\":\"ps\",\"size\":4}");
        assertThat(PlanJson.read(json, Plan.class, "test worker").algorithm()).isSameAs(AllReduceAlgorithm.named("ps"));
        assertThatThrownBy(() -> PlanJson.read("{\"algorithm\":\"allgather\",\"size\":4}", Plan.class, "test worker"))
                .hasMessageContaining("test worker: the plan is refused: unknown all-reduce algorithm 'allgather'");
    }
}
