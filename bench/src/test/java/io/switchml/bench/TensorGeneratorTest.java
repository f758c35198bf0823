package io.switchml.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TensorGeneratorTest {
    private static final int ROWS = 4000;

    @Test
    void aSparseTensorIsZeroOutsideTheSameFractionOfRowsAtEveryRank() {
        TensorGenerator sparse = new TensorGenerator(7, new Sparsity(0.05, false));
        TensorGenerator dense = new TensorGenerator(7);
        int nonZeroRows = 0;
        for (int row = 0; row < ROWS; row++) {
            long first = (long) row * TensorGenerator.ROW_ELEMENTS;
            boolean holdsValues = sparse.inNonZeroRow(0, first);
            nonZeroRows += holdsValues ? 1 : 0;
            for (int rank = 0; rank < 3; rank++) {
                for (long i = first; i < first + TensorGenerator.ROW_ELEMENTS; i += 97) {
                    assertThat(sparse.inNonZeroRow(rank, i)).isEqualTo(holdsValues);
                    float expected = holdsValues ? dense.floatAt(rank, i) : 0f;
                    assertThat(sparse.floatAt(rank, i)).isEqualTo(expected);
                    assertThat(sparse.intAt(rank, i)).isEqualTo(holdsValues ? dense.intAt(rank, i) : 0);
                }
            }
        }
        // 5 % of 4000 rows: 200, with a standard deviation of about 14.
        assertThat(nonZeroRows).isBetween(140, 260);
        assertThat(dense.inNonZeroRow(2, 123_456_789L)).isTrue();
    }

    @Test
    void perRankRowsDifferBetweenRanksAndCoverAboutTheUnionsShare() {
        TensorGenerator sparse = new TensorGenerator(7, new Sparsity(0.05, true));
        int atSomeRank = 0;
        int atBoth = 0;
        for (int row = 0; row < ROWS; row++) {
            long first = (long) row * TensorGenerator.ROW_ELEMENTS;
            boolean zero = sparse.inNonZeroRow(0, first);
            boolean one = sparse.inNonZeroRow(1, first);
            atSomeRank += zero || one ? 1 : 0;
            atBoth += zero && one ? 1 : 0;
            assertThat(sparse.floatAt(1, first + 5) != 0f).isEqualTo(one);
        }
        // 1 - 0.95^2 = 9.75 % of 4000 rows: 390; both: 0.25 %, 10.
        assertThat(atSomeRank).isBetween(320, 460);
        assertThat(atBoth).isLessThan(30);
    }

    @Test
    void theFractionMustBeAboveZeroAndAtMostOne() {
        assertThatThrownBy(() -> new Sparsity(0, false)).hasMessageContaining("(0, 1], not 0.0");
        assertThatThrownBy(() -> new Sparsity(1.5, true)).hasMessageContaining("(0, 1], not 1.5");
        assertThatThrownBy(() -> new Sparsity(Double.NaN, false)).hasMessageContaining("not NaN");
        assertThatThrownBy(() -> Sparsity.perRank("some")).hasMessageContaining("same or per-rank, not 'some'");
    }
}
