package io.switchml.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TensorGeneratorTest {
    private static final int ROWS = 4000;

    @Test
    void aSparseTensorIsZeroOutsideTheSameFractionOfRowsAtEveryRank() {
        TensorGenerator sparse = new TensorGenerator(7, 0.05);
        TensorGenerator dense = new TensorGenerator(7);
        int nonZeroRows = 0;
        for (int row = 0; row < ROWS; row++) {
            long first = (long) row * TensorGenerator.ROW_ELEMENTS;
            boolean holdsValues = sparse.inNonZeroRow(first);
            nonZeroRows += holdsValues ? 1 : 0;
            for (int rank = 0; rank < 3; rank++) {
                for (long i = first; i < first + TensorGenerator.ROW_ELEMENTS; i += 97) {
                    assertThat(sparse.inNonZeroRow(i)).isEqualTo(holdsValues);
                    float expected = holdsValues ? dense.floatAt(rank, i) : 0f;
                    assertThat(sparse.floatAt(rank, i)).isEqualTo(expected);
                    assertThat(sparse.intAt(rank, i)).isEqualTo(holdsValues ? dense.intAt(rank, i) : 0);
                }
            }
        }
        // 5 % of 4000 rows: 200, with a standard deviation of about 14.
        assertThat(nonZeroRows).isBetween(140, 260);
        assertThat(dense.inNonZeroRow(123_456_789L)).isTrue();
    }

    @Test
    void theFractionMustBeAboveZeroAndAtMostOne() {
        assertThatThrownBy(() -> new TensorGenerator(1, 0)).hasMessageContaining("(0, 1], not 0.0");
        assertThatThrownBy(() -> new TensorGenerator(1, 1.5)).hasMessageContaining("(0, 1], not 1.5");
        assertThatThrownBy(() -> new TensorGenerator(1, Double.NaN)).hasMessageContaining("not NaN");
    }
}
