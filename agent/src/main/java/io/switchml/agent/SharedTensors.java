package io.switchml.agent;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The file under /dev/shm that the agent and its local process both map: the process writes a tensor
 * there, the agent all-reduces it in place through a direct buffer on the mapping (no copy on the
 * Java side), and the process reads the result from the same bytes.
 */
final class SharedTensors implements AutoCloseable {
    private final Path file;
    private final MappedByteBuffer mapping;

    private SharedTensors(Path file, MappedByteBuffer mapping) {
        this.file = file;
        this.mapping = mapping;
    }

    /** Creates (or truncates) the file at this size and maps it. */
    static SharedTensors create(Path file, long bytes) {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(0);
            raf.setLength(bytes);
            // Also removed when the agent is stopped by a signal (its process died, the launcher stopped it).
            file.toFile().deleteOnExit();
            MappedByteBuffer mapping = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, bytes);
            mapping.order(ByteOrder.nativeOrder());
            return new SharedTensors(file, mapping);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the shared memory file " + file + " of " + bytes + " bytes: " + e.getMessage(), e);
        }
    }

    long bytes() {
        return mapping.capacity();
    }

    FloatBuffer floats(long offset, long count) {
        return mapping.slice(checked(offset, count), (int) count * Float.BYTES).order(ByteOrder.nativeOrder()).asFloatBuffer();
    }

    IntBuffer ints(long offset, long count) {
        return mapping.slice(checked(offset, count), (int) count * Integer.BYTES).order(ByteOrder.nativeOrder()).asIntBuffer();
    }

    private int checked(long offset, long count) {
        if (offset < 0 || count < 0 || offset % 4 != 0 || offset + count * 4 > mapping.capacity()) {
            throw new IllegalArgumentException("tensor of " + count + " 4-byte elements at byte " + offset
                    + " is not 4-byte aligned inside the shared memory of " + mapping.capacity() + " bytes");
        }
        return (int) offset;
    }

    /** Removes the file; the mapping goes when the process ends (Java cannot unmap it earlier). */
    @Override
    public void close() {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // A file left in /dev/shm costs memory, but is no reason to fail the agent's exit.
            System.err.println("switchml agent: cannot remove " + file + ": " + e.getMessage());
        }
    }
}
