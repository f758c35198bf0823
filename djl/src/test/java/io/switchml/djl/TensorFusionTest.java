package io.switchml.djl;

import ai.djl.Model;
import ai.djl.training.Trainer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TensorFusionTest {
    @Test
    void bucketsFollowTheLayoutAndRespectTheThreshold() {
        try (Model model = Model.newInstance("fusion"); Trainer trainer = Models.mlp(model, 50, 1)) {
            GradientLayout layout = GradientLayout.trainable(model.getBlock());
            // weights 50x20 (4000 B), bias 50 (200 B), weights 3x50 (600 B), bias 3 (12 B)
            assertThat(layout.entries()).extracting(GradientLayout.Entry::elements).containsExactly(1000, 50, 150, 3);
            List<List<Integer>> cut = new ArrayList<>();
            for (TensorFusion.Bucket b : new TensorFusion(layout, 800).buckets()) {
                cut.add(b.entries().stream().map(GradientLayout.Entry::index).toList());
            }
            // the 4000-byte tensor is larger than the threshold: a bucket of its own
            assertThat(cut).containsExactly(List.of(0), List.of(1, 2), List.of(3));
            assertThat(new TensorFusion(layout, TensorFusion.DEFAULT_BUCKET_BYTES).buckets()).hasSize(1);
            assertThatThrownBy(() -> new TensorFusion(layout, 2)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void packAndUnpackAreExact() {
        try (Model model = Model.newInstance("fusion"); Trainer trainer = Models.mlp(model, 50, 2)) {
            GradientLayout layout = GradientLayout.trainable(model.getBlock());
            TensorFusion fusion = new TensorFusion(layout, 1000);
            for (TensorFusion.Bucket bucket : fusion.buckets()) {
                bucket.forEachTensor((e, view) -> TensorFusion.copy(e, e.parameter().getArray().toByteBuffer(true), view));
                // the packed floats are the parameters, in layout order
                float[] packed = new float[bucket.elements()];
                bucket.floats().get(0, packed);
                int at = 0;
                for (GradientLayout.Entry e : bucket.entries()) {
                    float[] values = e.parameter().getArray().toFloatArray();
                    for (float v : values) {
                        assertThat(Float.floatToRawIntBits(packed[at++])).isEqualTo(Float.floatToRawIntBits(v));
                    }
                }
                List<float[]> unpacked = new ArrayList<>();
                bucket.forEachTensor((e, view) -> {
                    float[] v = new float[e.elements()];
                    view.asFloatBuffer().get(v);
                    unpacked.add(v);
                });
                for (int i = 0; i < unpacked.size(); i++) {
                    assertThat(unpacked.get(i)).isEqualTo(bucket.entries().get(i).parameter().getArray().toFloatArray());
                }
            }
        }
    }

    @Test
    void aTensorOfTheWrongSizeIsRefused() {
        try (Model model = Model.newInstance("fusion"); Trainer trainer = Models.mlp(model, 5, 3)) {
            GradientLayout layout = GradientLayout.trainable(model.getBlock());
            TensorFusion.Bucket bucket = new TensorFusion(layout, 1 << 20).buckets().get(0);
            assertThatThrownBy(() -> bucket.forEachTensor((e, view) -> TensorFusion.copy(e, ByteBuffer.allocate(4), view)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("did the model change");
        }
    }

    @Test
    void layoutsOfDifferentModelsHaveDifferentFingerprints() {
        try (Model a = Model.newInstance("a"); Trainer ta = Models.mlp(a, 16, 1);
             Model b = Model.newInstance("b"); Trainer tb = Models.mlp(b, 17, 1);
             Model c = Model.newInstance("c"); Trainer tc = Models.mlp(c, 16, 9)) {
            long fa = GradientLayout.trainable(a.getBlock()).fingerprint();
            assertThat(GradientLayout.trainable(b.getBlock()).fingerprint()).isNotEqualTo(fa);
            // same architecture, other initial values: same layout
            assertThat(GradientLayout.trainable(c.getBlock()).fingerprint()).isEqualTo(fa);
        }
    }
}
