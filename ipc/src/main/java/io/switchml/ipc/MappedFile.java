package io.switchml.ipc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Maps the files of the shared-memory port. They are created with mode 0600, before anything is
 * written into them: the tensors in them are their user's alone. They are never unmapped
 * explicitly: a thread may still read a mapping another thread gave up, and touching an unmapped
 * page kills the JVM. The garbage collector unmaps a mapping nobody references.
 */
final class MappedFile {
    private MappedFile() {
    }

    static MappedByteBuffer create(Path file, long bytes) {
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                return channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the shared-memory file " + file + ": " + e.getMessage(), e);
        }
    }

    static MappedByteBuffer open(Path file) {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map the switch's shared-memory file " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Whether {@code file} still has {@code bytes} bytes: a process of the same user can truncate a mapped file, and
     * reading a page that is gone raises an {@link InternalError} (the JVM's SIGBUS). A file whose name is gone counts
     * as not whole: a mapping outlives its name, so only a size tells.
     */
    static boolean whole(Path file, long bytes) {
        try {
            return Files.size(file) >= bytes;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Whether {@code file} exists and is shorter than {@code bytes}: truncated under its mappings, whose reads may
     * fault. A removed name is not that (the switch removes a job's files when the job ends; the pages stay mapped).
     */
    static boolean shrank(Path file, long bytes) {
        try {
            return Files.size(file) < bytes;
        } catch (IOException e) {
            return false;
        }
    }
}
