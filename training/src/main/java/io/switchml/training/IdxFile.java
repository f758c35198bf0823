package io.switchml.training;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * A file in the IDX format of MNIST and Fashion-MNIST, unsigned bytes only: a big-endian magic
 * number {@code 0x0000 08 D} (type 0x08 = unsigned byte, D dimensions), D big-endian 32-bit sizes,
 * then the values in row-major order. Files ending in {@code .gz} are decompressed on the fly.
 *
 * @param dimensions the sizes, outermost first
 * @param values     every value, row-major
 */
public record IdxFile(int[] dimensions, byte[] values) {
    private static final int UNSIGNED_BYTE = 0x08;

    public static IdxFile read(Path path) throws IOException {
        try (InputStream raw = Files.newInputStream(path);
             DataInputStream in = new DataInputStream(new BufferedInputStream(
                     path.getFileName().toString().endsWith(".gz") ? new GZIPInputStream(raw, 1 << 16) : raw, 1 << 16))) {
            int magic = in.readInt();
            int type = (magic >>> 8) & 0xff;
            int rank = magic & 0xff;
            if ((magic >>> 16) != 0 || type != UNSIGNED_BYTE || rank < 1 || rank > 4) {
                throw new IOException(path + " is not an IDX file of unsigned bytes (magic 0x"
                        + Integer.toHexString(magic) + ", expected 0x000008 followed by 1..4 dimensions)");
            }
            int[] dimensions = new int[rank];
            long count = 1;
            for (int d = 0; d < rank; d++) {
                dimensions[d] = in.readInt();
                if (dimensions[d] < 0) {
                    throw new IOException(path + ": negative size " + dimensions[d] + " in dimension " + d);
                }
                count *= dimensions[d];
            }
            if (count > Integer.MAX_VALUE - 8) {
                throw new IOException(path + ": " + count + " values do not fit in one array");
            }
            byte[] values = new byte[(int) count];
            try {
                in.readFully(values);
            } catch (EOFException e) {
                throw new IOException(path + " is truncated: its header promises " + count + " values", e);
            }
            if (in.read() != -1) {
                throw new IOException(path + " has data after the " + count + " values its header promises");
            }
            return new IdxFile(dimensions, values);
        }
    }

    /** The number of items: the outermost dimension. */
    public int count() {
        return dimensions[0];
    }

    /** Values per item: the product of the inner dimensions. */
    public int itemSize() {
        int size = 1;
        for (int d = 1; d < dimensions.length; d++) {
            size *= dimensions[d];
        }
        return size;
    }
}
