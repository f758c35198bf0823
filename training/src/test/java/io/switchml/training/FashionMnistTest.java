package io.switchml.training;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.zip.GZIPOutputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FashionMnistTest {
    @TempDir
    Path dir;

    /** Writes an IDX file of unsigned bytes, gzipped when the name ends in .gz. */
    private Path idx(String name, int[] dims, byte[] values, int magic) throws IOException {
        Path p = dir.resolve(name);
        try (OutputStream raw = Files.newOutputStream(p);
             DataOutputStream out = new DataOutputStream(name.endsWith(".gz") ? new GZIPOutputStream(raw) : raw)) {
            out.writeInt(magic);
            for (int d : dims) {
                out.writeInt(d);
            }
            out.write(values);
        }
        return p;
    }

    private void dataset(int n, String suffix) throws IOException {
        byte[] pixels = new byte[n * FashionMnist.PIXELS];
        byte[] labels = new byte[n];
        for (int i = 0; i < n; i++) {
            labels[i] = (byte) (i % 10);
            for (int j = 0; j < FashionMnist.PIXELS; j++) {
                pixels[i * FashionMnist.PIXELS + j] = (byte) (i + j);
            }
        }
        idx("train-images-idx3-ubyte" + suffix, new int[]{n, 28, 28}, pixels, 0x803);
        idx("train-labels-idx1-ubyte" + suffix, new int[]{n}, labels, 0x801);
    }

    @Test
    void readsCompressedAndPlainIdxFiles() throws IOException {
        Path p = idx("a.gz", new int[]{2, 3}, new byte[]{1, 2, 3, (byte) 250, 5, 6}, 0x802);
        IdxFile f = IdxFile.read(p);
        assertThat(f.dimensions()).containsExactly(2, 3);
        assertThat(f.count()).isEqualTo(2);
        assertThat(f.itemSize()).isEqualTo(3);
        assertThat(f.values()[3] & 0xff).isEqualTo(250);
        assertThat(IdxFile.read(idx("b", new int[]{4}, new byte[]{9, 8, 7, 6}, 0x801)).values()).containsExactly(9, 8, 7, 6);
    }

    @Test
    void malformedIdxFilesAreRefusedWithTheReason() throws IOException {
        assertThatThrownBy(() -> IdxFile.read(idx("float", new int[]{1}, new byte[4], 0x0D01)))
                .isInstanceOf(IOException.class).hasMessageContaining("not an IDX file of unsigned bytes");
        assertThatThrownBy(() -> IdxFile.read(idx("short", new int[]{10}, new byte[3], 0x801)))
                .isInstanceOf(IOException.class).hasMessageContaining("truncated");
        assertThatThrownBy(() -> IdxFile.read(idx("long", new int[]{2}, new byte[3], 0x801)))
                .isInstanceOf(IOException.class).hasMessageContaining("data after");
    }

    @Test
    void loadsScaledPixelsAndLabels() throws IOException {
        dataset(20, ".gz");
        FashionMnist.Split s = FashionMnist.train(dir);
        assertThat(s.size()).isEqualTo(20);
        assertThat(s.scaledPixels()).hasSize(20 * FashionMnist.PIXELS);
        assertThat(s.scaledPixels()[FashionMnist.PIXELS + 1]).isEqualTo(2 / 255f);
        assertThat(s.labels()[13]).isEqualTo(3f);
    }

    @Test
    void shardsAreEqualDisjointAndTheSameOnEveryWorker() throws IOException {
        dataset(103, "");
        FashionMnist.Split all = FashionMnist.train(dir);
        Set<Float> firstPixels = new HashSet<>();
        for (int rank = 0; rank < 4; rank++) {
            FashionMnist.Split shard = all.shard(rank, 4, 7);
            assertThat(shard.size()).isEqualTo(25); // 103 / 4, the remainder left out
            assertThat(all.shard(rank, 4, 7).scaledPixels()).isEqualTo(shard.scaledPixels());
            float[] pixels = shard.scaledPixels();
            for (int i = 0; i < shard.size(); i++) {
                // pixel 0 of image k is k / 255: identifies the image
                assertThat(firstPixels.add(pixels[i * FashionMnist.PIXELS])).isTrue();
                assertThat(shard.labels()[i]).isEqualTo(Math.round(pixels[i * FashionMnist.PIXELS] * 255) % 10);
            }
        }
        assertThatThrownBy(() -> all.shard(4, 4, 7)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aMissingDatasetSaysHowToInstallIt() {
        assertThatThrownBy(() -> FashionMnist.train(dir.resolve("nowhere")))
                .isInstanceOf(FashionMnist.DatasetMissingException.class)
                .hasMessageContaining("apt-get install dataset-fashion-mnist");
    }

    @Test
    void imagesAndLabelsThatDisagreeAreRefused() throws IOException {
        idx("train-images-idx3-ubyte", new int[]{2, 28, 28}, new byte[2 * FashionMnist.PIXELS], 0x803);
        idx("train-labels-idx1-ubyte", new int[]{3}, new byte[3], 0x801);
        assertThatThrownBy(() -> FashionMnist.train(dir)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("[3] labels for 2 images");
    }
}
