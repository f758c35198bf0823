package io.switchml.api;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TensorLayoutTest {
    private static final TensorLayout LAYOUT = TensorLayout.builder()
            .add("w1", 4, 5)   // 80 bytes
            .add("b1", 5)      // 20
            .add("w2", 5, 30)  // 600
            .add("b2", 3)      // 12
            .build();

    @Test
    void entriesFollowEachOtherInOrder() {
        assertThat(LAYOUT.entries()).extracting(TensorLayout.Entry::offset).containsExactly(0L, 20L, 25L, 175L);
        assertThat(LAYOUT.totalElements()).isEqualTo(178);
        assertThat(LAYOUT.totalBytes()).isEqualTo(712);
        assertThat(LAYOUT.describe()).isEqualTo("4 parameters, 178 elements (w1 (4, 5) ... b2 (3))");
    }

    @Test
    void bucketsAreCutInOrderAndATensorLargerThanABucketGetsItsOwn() {
        assertThat(LAYOUT.buckets(128)).containsExactly(new TensorLayout.Bucket(0, 2, 25), new TensorLayout.Bucket(2, 3, 150),
                new TensorLayout.Bucket(3, 4, 3));
        assertThat(LAYOUT.buckets(1 << 20)).containsExactly(new TensorLayout.Bucket(0, 4, 178));
        assertThatThrownBy(() -> LAYOUT.buckets(2)).hasMessageContaining("below one float");
        assertThat(TensorLayout.builder().build().buckets(64)).isEmpty();
    }

    @Test
    void theFingerprintTellsNamesAndShapesApart() {
        TensorLayout same = TensorLayout.builder().add("w1", 4, 5).add("b1", 5).add("w2", 5, 30).add("b2", 3).build();
        TensorLayout reshaped = TensorLayout.builder().add("w1", 5, 4).add("b1", 5).add("w2", 5, 30).add("b2", 3).build();
        TensorLayout renamed = TensorLayout.builder().add("w0", 4, 5).add("b1", 5).add("w2", 5, 30).add("b2", 3).build();
        assertThat(same.fingerprint()).isEqualTo(LAYOUT.fingerprint());
        assertThat(List.of(reshaped.fingerprint(), renamed.fingerprint())).doesNotContain(LAYOUT.fingerprint());
    }

    @Test
    void namesMustBeUniqueAndShapesStatic() {
        assertThatThrownBy(() -> TensorLayout.builder().add("w", 2).add("w", 3))
                .hasMessageContaining("two tensors are named 'w'");
        assertThatThrownBy(() -> TensorLayout.builder().add("x", -1, 784))
                .hasMessageContaining("tensor x has an unknown or negative dimension [-1, 784]");
    }
}
