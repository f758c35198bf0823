package io.switchml.protocol;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LeafRanksTest {
    @Test
    void everyRankHasExactlyTheLeafWhoseRangeHoldsIt() {
        for (int workers = 1; workers <= 70; workers++) {
            for (int leaves = 1; leaves <= workers; leaves++) {
                int next = 0;
                for (int leaf = 0; leaf < leaves; leaf++) {
                    assertThat(LeafRanks.firstRank(leaf, leaves, workers)).isEqualTo(next);
                    assertThat(LeafRanks.rankCount(leaf, leaves, workers)).as("n=%d L=%d leaf %d", workers, leaves, leaf)
                            .isPositive();
                    for (int r = next; r < next + LeafRanks.rankCount(leaf, leaves, workers); r++) {
                        assertThat(LeafRanks.leafOf(r, leaves, workers)).as("n=%d L=%d rank %d", workers, leaves, r)
                                .isEqualTo(leaf);
                    }
                    next += LeafRanks.rankCount(leaf, leaves, workers);
                }
                assertThat(next).isEqualTo(workers);
            }
        }
    }

    @Test
    void sixtyFourRanksOverEightLeavesAreEightEach() {
        assertThat(LeafRanks.describe(0, 8, 64)).isEqualTo("0..7");
        assertThat(LeafRanks.describe(7, 8, 64)).isEqualTo("56..63");
        assertThat(LeafRanks.describe(1, 2, 5)).isEqualTo("2..4");
    }

    @Test
    void aRankOutsideTheJobIsRefused() {
        assertThatThrownBy(() -> LeafRanks.leafOf(4, 2, 4)).hasMessageContaining("rank 4 outside 0..3");
    }
}
