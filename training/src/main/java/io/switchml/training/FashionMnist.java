package io.switchml.training;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Fashion-MNIST (Zalando: 28x28 grey images of clothes, 10 classes, 60000 for training and 10000
 * for testing), read from the IDX files of the Debian package {@code dataset-fashion-mnist}.
 */
public final class FashionMnist {
    /** Where the Debian package installs the files. */
    public static final Path DEFAULT_DIRECTORY = Path.of("/usr/share/datasets/fashion-mnist");
    public static final int CLASSES = 10;
    public static final int PIXELS = 28 * 28;
    public static final List<String> LABEL_NAMES = List.of("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
            "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot");

    /**
     * Images and their labels. Pixels stay bytes until {@link #scaledPixels()}, so a worker converts only
     * its own shard.
     *
     * @param pixels row-major, {@link #PIXELS} per image, grey levels 0..255 as unsigned bytes
     * @param labels class indices 0..9, as floats (DJL's classification losses take them so)
     */
    public record Split(byte[] pixels, float[] labels) implements java.io.Serializable {
        private static final long serialVersionUID = 1L;

        public Split {
            if (pixels.length != (long) labels.length * PIXELS) {
                throw new IllegalArgumentException(pixels.length + " pixel bytes for " + labels.length + " images of " + PIXELS);
            }
        }

        public int size() {
            return labels.length;
        }

        /** The pixels scaled from 0..255 to 0..1, in a new array. */
        public float[] scaledPixels() {
            float[] scaled = new float[pixels.length];
            for (int i = 0; i < scaled.length; i++) {
                scaled[i] = (pixels[i] & 0xff) / 255f;
            }
            return scaled;
        }

        /**
         * One worker's share: the images are shuffled with {@code seed} (the same permutation on every worker),
         * then each of {@code workers} ranks takes an equal run of it; the remainder (fewer than {@code workers}
         * images) is left out so every rank runs the same number of steps.
         */
        public Split shard(int rank, int workers, long seed) {
            if (workers < 1 || rank < 0 || rank >= workers) {
                throw new IllegalArgumentException("rank " + rank + " of " + workers + " workers");
            }
            int[] order = permutation(size(), new Random(seed));
            int share = size() / workers;
            byte[] p = new byte[share * PIXELS];
            float[] l = new float[share];
            for (int i = 0; i < share; i++) {
                int from = order[rank * share + i];
                System.arraycopy(pixels, from * PIXELS, p, i * PIXELS, PIXELS);
                l[i] = labels[from];
            }
            return new Split(p, l);
        }

        /** The first {@code n} images (or all, if fewer). */
        public Split first(int n) {
            int k = Math.min(n, size());
            return new Split(Arrays.copyOf(pixels, k * PIXELS), Arrays.copyOf(labels, k));
        }
    }

    private FashionMnist() {
    }

    /** Fails with how to install the dataset unless all four files are in {@code directory}. */
    public static void requirePresent(Path directory) {
        for (String name : List.of("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                "t10k-labels-idx1-ubyte")) {
            find(directory, name);
        }
    }

    public static Split train(Path directory) {
        return read(directory, "train-images-idx3-ubyte", "train-labels-idx1-ubyte");
    }

    public static Split test(Path directory) {
        return read(directory, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte");
    }

    private static Split read(Path directory, String imagesName, String labelsName) {
        Path images = find(directory, imagesName);
        Path labels = find(directory, labelsName);
        try {
            IdxFile x = IdxFile.read(images);
            IdxFile y = IdxFile.read(labels);
            if (x.dimensions().length != 3 || x.itemSize() != PIXELS) {
                throw new IOException(images + " holds " + Arrays.toString(x.dimensions()) + " values, not N x 28 x 28 images");
            }
            if (y.dimensions().length != 1 || y.count() != x.count()) {
                throw new IOException(labels + " holds " + Arrays.toString(y.dimensions()) + " labels for " + x.count() + " images");
            }
            float[] classes = new float[y.count()];
            for (int i = 0; i < classes.length; i++) {
                int c = y.values()[i] & 0xff;
                if (c >= CLASSES) {
                    throw new IOException(labels + ": label " + c + " of image " + i + " is not a class 0..9");
                }
                classes[i] = c;
            }
            return new Split(x.values(), classes);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read Fashion-MNIST: " + e.getMessage(), e);
        }
    }

    /** The file, compressed or not; a clear error naming the package when it is missing. */
    private static Path find(Path directory, String name) {
        for (Path candidate : List.of(directory.resolve(name + ".gz"), directory.resolve(name))) {
            if (Files.isReadable(candidate)) {
                return candidate;
            }
        }
        throw new DatasetMissingException("Fashion-MNIST is not in " + directory + " (no " + name + "[.gz]). Install it with:"
                + "  sudo apt-get install dataset-fashion-mnist  (it puts the IDX files in " + DEFAULT_DIRECTORY
                + "), or pass --data DIR with the four IDX files");
    }

    /** The missing dataset, with how to install it. */
    public static final class DatasetMissingException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DatasetMissingException(String message) {
            super(message);
        }
    }

    /** 0..n-1 shuffled by {@code random} (Fisher-Yates); the training loops' epoch order too. */
    static int[] permutation(int n, Random random) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }
}
