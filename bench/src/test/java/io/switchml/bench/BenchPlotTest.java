package io.switchml.bench;

import io.switchml.launch.LaunchException;
import io.switchml.launch.PlotFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.imageio.ImageIO;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The PNG of a run: sweeps, a single row, the rack's line rate, and paths it cannot write. */
class BenchPlotTest {
    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    @TempDir
    Path dir;

    @Test
    void aSweepOfAlgorithmsWorkersAndSizesMakesOnePng() throws IOException {
        List<BenchRow> rows = new ArrayList<>();
        for (int n : new int[]{2, 4, 8}) {
            for (String algo : new String[]{"switchml", "ring", "ps"}) {
                for (long bytes = 4096; bytes <= (64L << 20); bytes *= 4) {
                    rows.add(new BenchRow(algo, n, bytes, "float32", 3, 1 + bytes / 1e6 * n, 1, 2, 0, true));
                }
            }
        }
        assertPng(write(rows, "sweep.png"));
    }

    @Test
    void oneRowStillMakesAPlot() throws IOException {
        assertPng(write(List.of(new BenchRow("switchml", 2, 65536, "float32", 1, 3.5, 3.5, 3.5, 0, null)), "one.png"));
    }

    @Test
    void rackRowsAddTheLineRate() throws IOException {
        List<BenchRow> rows = List.of(
                new BenchRow("switchml", 4, 64L << 20, "float32", 5, 1112.0, 1102.6, 1229.5, 12, true, 500_000_000L),
                new BenchRow("ring", 4, 64L << 20, "float32", 5, 1734.7, 1694.4, 1799.1, 0, true, 500_000_000L));
        assertPng(write(rows, "rack.png"));
    }

    @Test
    void aPathItCannotWriteGetsAClearError() throws IOException {
        List<BenchRow> rows = List.of(new BenchRow("ring", 2, 4096, "float32", 1, 1, 1, 1, 0, null));
        Path missing = dir.resolve("no-such-dir").resolve("p.png");
        assertThatThrownBy(() -> BenchPlot.write(rows, missing)).isInstanceOf(LaunchException.class)
                .hasMessage("cannot write the plot to " + missing + ": the directory " + missing.getParent()
                        + " does not exist");
        assertThatThrownBy(() -> PlotFiles.requireWritable(dir)).hasMessageEndingWith(": it is a directory");
        assertThatThrownBy(() -> BenchPlot.write(List.of(), dir.resolve("empty.png")))
                .hasMessageContaining("nothing to plot");
        assertThat(Files.exists(dir.resolve("empty.png"))).isFalse();
    }

    private Path write(List<BenchRow> rows, String name) {
        Path file = dir.resolve(name);
        BenchPlot.write(rows, file);
        return file;
    }

    private static void assertPng(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        assertThat(Arrays.copyOf(bytes, PNG_SIGNATURE.length)).isEqualTo(PNG_SIGNATURE);
        BufferedImage image = ImageIO.read(file.toFile());
        assertThat(image).isNotNull();
        assertThat(image.getWidth()).isPositive();
        assertThat(image.getHeight()).isPositive();
    }
}
