package io.switchml.agent;

import com.sun.security.auth.module.UnixSystem;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * The file under /dev/shm that the agent and its local processes map: each process writes its tensors
 * into a region of its own (one per local rank, each page-aligned so that Python can map just its own),
 * the agent reduces them in place through direct buffers on the mappings (no copy on the Java side), and
 * each process reads the result from its region's bytes.
 *
 * <p>The tensors are the rank's gradients, so the file is its owner's alone: it is created with mode
 * 0600 in the same system call that creates it (no moment in which the umask's mode lets another
 * local user open it), and an existing file is reused only when it is a regular file of this user
 * that nobody else may open. A file with looser modes is refused, not repaired: whoever opened it
 * while it was readable keeps that descriptor after a chmod.
 */
final class SharedTensors implements AutoCloseable {
    /** Owner read and write, nothing for the group or others. */
    static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rw-------");
    private static final FileAttribute<Set<PosixFilePermission>> PRIVATE_ON_CREATION = PosixFilePermissions.asFileAttribute(PRIVATE);
    private static final Set<PosixFilePermission> OTHERS = EnumSet.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    /** Regions start on page boundaries: a process maps only its own (mmap's offset is a multiple of the page). */
    private static final long PAGE = 4096;

    private final Path file;
    private final MappedByteBuffer[] regions;
    private final long stride;

    private SharedTensors(Path file, MappedByteBuffer[] regions, long stride) {
        this.file = file;
        this.regions = regions;
        this.stride = stride;
    }

    /**
     * Creates the file, private to this user, with {@code regions} regions of this size and maps them; an existing
     * file of this user with mode 0600 (or stricter) is emptied and reused.
     *
     * @throws UncheckedIOException when the file cannot be created, or exists and belongs to another
     *                              user, is not a regular file, or others may open it
     */
    static SharedTensors create(Path file, long bytes, int regions) {
        long stride = (bytes + PAGE - 1) / PAGE * PAGE;
        long size = stride * (regions - 1) + bytes;
        try (FileChannel channel = openPrivate(file)) {
            channel.truncate(0);
            // One byte at the end sizes the file (sparse until written), as ftruncate would.
            channel.write(ByteBuffer.allocate(1), size - 1);
            // Also removed when the agent is stopped by a signal (its process died, the launcher stopped it).
            file.toFile().deleteOnExit();
            MappedByteBuffer[] mappings = new MappedByteBuffer[regions];
            for (int r = 0; r < regions; r++) {
                mappings[r] = channel.map(FileChannel.MapMode.READ_WRITE, r * stride, bytes);
                mappings[r].order(ByteOrder.nativeOrder());
            }
            return new SharedTensors(file, mappings, stride);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the shared memory file " + file + " of " + size + " bytes: " + e.getMessage(), e);
        }
    }

    private static FileChannel openPrivate(Path file) throws IOException {
        try {
            // CREATE_NEW with the mode: open(O_CREAT | O_EXCL, 0600); the umask can only take bits away.
            return FileChannel.open(file, EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE), PRIVATE_ON_CREATION);
        } catch (FileAlreadyExistsException e) {
            // Checked before opening (a FIFO or a device is never opened) and after (it is still the file checked).
            Object checked = requirePrivate(file);
            FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS);
            try {
                if (!checked.equals(requirePrivate(file))) {
                    throw new IOException("it was replaced while the agent opened it");
                }
                return channel;
            } catch (IOException | RuntimeException failure) {
                channel.close();
                throw failure;
            }
        }
    }

    /**
     * Returns the file's key when it may hold this user's tensors: a regular file (not a link) of this
     * user that nobody else may open.
     *
     * @throws IOException saying what is wrong with it
     */
    private static Object requirePrivate(Path file) throws IOException {
        PosixFileAttributes attributes = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        String problem = null;
        long owner = ((Number) Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
        long self = new UnixSystem().getUid();
        Set<PosixFilePermission> loose = EnumSet.noneOf(PosixFilePermission.class);
        loose.addAll(attributes.permissions());
        loose.retainAll(OTHERS);
        if (!attributes.isRegularFile()) {
            problem = "it exists and is not a regular file";
        } else if (owner != self) {
            problem = "it exists and belongs to user " + owner + ", not to this user (" + self + ")";
        } else if (!loose.isEmpty()) {
            problem = "it exists with mode " + PosixFilePermissions.toString(attributes.permissions()) + ", which lets others open it";
        }
        if (problem != null) {
            throw new IOException(problem + "; the shared memory carries this rank's tensors, so it must be this user's"
                    + " alone (mode 0600): remove the file, or give the agent a new path (--shm)");
        }
        return attributes.fileKey();
    }

    /** The bytes of one region. */
    long bytes() {
        return regions[0].capacity();
    }

    /** Where region {@code region} starts in the file. */
    long offset(int region) {
        return region * stride;
    }

    /** {@code count} floats at byte {@code offset} of region {@code region}. */
    FloatBuffer floats(int region, long offset, long count) {
        return regions[region].slice(checked(offset, count), (int) count * Float.BYTES).order(ByteOrder.nativeOrder()).asFloatBuffer();
    }

    IntBuffer ints(int region, long offset, long count) {
        return regions[region].slice(checked(offset, count), (int) count * Integer.BYTES).order(ByteOrder.nativeOrder()).asIntBuffer();
    }

    private int checked(long offset, long count) {
        if (offset < 0 || count < 0 || offset % 4 != 0 || offset + count * 4 > bytes()) {
            throw new IllegalArgumentException("tensor of " + count + " 4-byte elements at byte " + offset
                    + " is not 4-byte aligned inside the shared memory of " + bytes() + " bytes");
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
