package io.switchml.client;

import io.switchml.api.SwitchMLException;
import org.junit.jupiter.api.Test;

import java.util.BitSet;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The failover's agreement, computed as the switch would sum the ranks' contributions. */
class RecoveryPlanTest {
    @Test
    void progressRoundTripsThroughTheSum() {
        int n = 3;
        int[] sum = new int[4 * n];
        long[][] reports = {{5, 7}, {4, 9}, {1L << 40, (1L << 40) + 2}};
        for (int r = 0; r < n; r++) {
            add(sum, RecoveryPlan.progressContribution(r, n, reports[r][0], reports[r][1]));
        }
        RecoveryPlan.Progress p = RecoveryPlan.progress(sum, n);
        assertThat(p.oldestUnfinished()).containsExactly(5, 4, 1L << 40);
        assertThat(p.lastSubmitted()).containsExactly(7, 9, (1L << 40) + 2);
        assertThat(p.first()).isEqualTo(4);
        assertThat(p.last()).isEqualTo(7);
    }

    @Test
    void blocksAreKeptRedoneOrCopiedFromTheLowestRankHoldingThem() {
        int n = 3;
        // One all-reduce (#4) of 5 blocks, unfinished on every rank.
        RecoveryPlan.Progress progress = new RecoveryPlan.Progress(new long[]{4, 4, 4}, new long[]{4, 4, 4});
        int[] blocks = {5};
        BitSet[] held = {bits(0, 1, 2), bits(0, 2, 3), bits(0, 1, 3)};
        int[] sum = new int[5];
        for (int r = 0; r < n; r++) {
            add(sum, RecoveryPlan.heldContribution(r, n, blocks, Map.of(0, held[r])));
        }
        List<RecoveryPlan.Repair> repairs = RecoveryPlan.repairs(progress, 4, blocks, sum);
        assertThat(repairs).hasSize(1);
        RecoveryPlan.Repair repair = repairs.get(0);
        assertThat(repair.sequence()).isEqualTo(4);
        assertThat(repair.kept()).isEqualTo(1);                  // block 0: everyone
        assertThat(repair.redo()).containsExactly(4);             // block 4: nobody
        assertThat(repair.copy()).containsExactly(1, 2, 3);
        assertThat(repair.copyDonors()).containsExactly(0, 0, 1); // block 3: ranks 1 and 2 hold it
    }

    @Test
    void aRankThatFinishedHoldsEveryBlockButCannotGiveThem() {
        int n = 2;
        // Rank 0 finished #4 (its oldest unfinished is #5); rank 1 still lacks block 1.
        RecoveryPlan.Progress progress = new RecoveryPlan.Progress(new long[]{5, 4}, new long[]{5, 4});
        int[] blocks = {2};
        int[] sum = RecoveryPlan.heldContribution(1, n, blocks, Map.of(0, bits(0)));
        assertThatThrownBy(() -> RecoveryPlan.repairs(progress, 4, blocks, sum))
                .isInstanceOf(SwitchMLException.class)
                .hasMessageContaining("block 1 of all-reduce #4").hasMessageContaining("already returned");

        // With a third rank that still holds it unfinished, that rank gives it.
        RecoveryPlan.Progress three = new RecoveryPlan.Progress(new long[]{5, 4, 4}, new long[]{5, 4, 4});
        int[] sum3 = RecoveryPlan.heldContribution(1, 3, blocks, Map.of(0, bits(0)));
        add(sum3, RecoveryPlan.heldContribution(2, 3, blocks, Map.of(0, bits(0, 1))));
        RecoveryPlan.Repair repair = RecoveryPlan.repairs(three, 4, blocks, sum3).get(0);
        assertThat(repair.kept()).isEqualTo(1);
        assertThat(repair.copy()).containsExactly(1);
        assertThat(repair.copyDonors()).containsExactly(2);
        assertThat(repair.finishedOn(0)).isTrue();
    }

    @Test
    void rankBitsBeyondThirtyTwoUseMoreWords() {
        int n = 40;
        RecoveryPlan.Progress progress = new RecoveryPlan.Progress(new long[n], new long[n]);
        int[] blocks = {1};
        int[] sum = new int[2];
        for (int r = 0; r < n; r++) {
            if (r != 35) {
                add(sum, RecoveryPlan.heldContribution(r, n, blocks, Map.of(0, bits(0))));
            }
        }
        RecoveryPlan.Repair repair = RecoveryPlan.repairs(progress, 0, blocks, sum).get(0);
        assertThat(repair.copy()).containsExactly(0);
        assertThat(repair.copyDonors()).containsExactly(0);
        add(sum, RecoveryPlan.heldContribution(35, n, blocks, Map.of(0, bits(0))));
        assertThat(RecoveryPlan.repairs(progress, 0, blocks, sum).get(0).kept()).isEqualTo(1);
    }

    private static BitSet bits(int... set) {
        BitSet b = new BitSet();
        for (int i : set) {
            b.set(i);
        }
        return b;
    }

    private static void add(int[] sum, int[] contribution) {
        for (int i = 0; i < sum.length; i++) {
            sum[i] += contribution[i];
        }
    }
}
