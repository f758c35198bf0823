package io.switchml.dataplane;

import io.switchml.ipc.PrivateHome;
import io.switchml.ipc.RequestRing;
import io.switchml.ipc.ResultBoard;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of the switch's shared-memory port (docs/ARCHITECTURE.md section 11), in a directory of
 * its own (mode 0700): a request ring per switch port ({@link RequestRing#fileName}) and a result
 * board per installed job ({@code job-<number>-<random>.results}, a new name for each install, so
 * that a worker never maps an earlier job's board).
 *
 * <p>The directory lies in the switch user's own home under the base, {@code switchml-<user>}
 * (mode 0700, owned by that user, never a link): nobody else can create, rename or swap anything
 * in it, so the start-up clean-up, which removes what switches that died left there (their
 * directory names carry their process ids), cannot be steered to another user's files. It deletes
 * through handles of the directories it opened, never following a link. Where that home cannot be
 * trusted (another user made it, or it is a link or not 0700) the switch makes its directory
 * straight under the base, as before, and removes nothing at start.
 */
final class IpcDirectory implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IpcDirectory.class);
    private static final String PREFIX = "switchml-ipc-";
    /**
     * Request bytes a port's ring holds: a few windows of the largest (60 KiB) packets, and small enough
     * to stay in the cache between the worker that writes a packet and the switch thread that reads it
     * (a 32 MiB ring streamed every packet through memory). A worker whose packet does not fit waits.
     */
    static final int REQUEST_RING_BYTES = 4 << 20;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path directory;

    private IpcDirectory(Path directory) {
        this.directory = directory;
    }

    /** /dev/shm where it exists (memory, not disk), else the temporary directory. */
    static String defaultBase() {
        Path shm = Paths.get("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm.toString() : System.getProperty("java.io.tmpdir");
    }

    /**
     * Makes a fresh directory in this user's home under {@code base}, after removing there those of
     * switches that are gone.
     */
    static IpcDirectory create(String base) {
        Path parent = Paths.get(base);
        Path home = trustedHome(parent);
        if (home != null) {
            removeAbandoned(home);
        }
        Path directory = (home != null ? home : parent).resolve(PREFIX + ProcessHandle.current().pid() + "-" + random());
        try {
            Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(PrivateHome.OWNER_ONLY));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the switch's shared-memory directory " + directory + ": "
                    + e.getMessage() + " (set another base, or turn the shared-memory port off)", e);
        }
        return new IpcDirectory(directory);
    }

    /** The home of this user's switches under {@code parent}, made if missing; null where it cannot be trusted. */
    static Path trustedHome(Path parent) {
        try {
            PrivateHome home = PrivateHome.under(parent);
            if (home.trusted()) {
                return home.path();
            }
            LOG.warn("security: not using {} for the shared-memory port: {}; the port's directory goes straight under {} and"
                    + " directories that dead switches left are not removed (remove {} to restore this)", home.path(),
                    home.refused(), parent, home.path());
        } catch (IOException | UnsupportedOperationException e) {
            LOG.debug("no home for the shared-memory port under {}: {}", parent, e.getMessage());
        }
        return null;
    }

    Path path() {
        return directory;
    }

    /** The request ring of switch port {@code portIndex}. */
    RequestRing createRequestRing(int portIndex) {
        return RequestRing.create(directory.resolve(RequestRing.fileName(portIndex)), REQUEST_RING_BYTES);
    }

    /** An installed job's result board and its file's name in the directory. */
    record Board(ResultBoard results, String fileName) {
    }

    /** A new board for an installed job. */
    Board createBoard(JobSpec spec) {
        String fileName = "job-" + spec.jobNumber() + "-" + random() + ".results";
        return new Board(ResultBoard.create(directory.resolve(fileName), spec.workers(), spec.slots(), spec.slotsPerThread(),
                spec.size().packetBytes()), fileName);
    }

    /** Removes a removed job's board; workers that still map it keep their mapping until they let it go. */
    void deleteBoard(String fileName) {
        try {
            Files.deleteIfExists(directory.resolve(fileName));
        } catch (IOException e) {
            LOG.warn("cannot remove the shared-memory board {}: {}", fileName, e.getMessage());
        }
    }

    /** Removes the directory and its files. */
    @Override
    public void close() {
        deleteTree(directory);
    }

    private static String random() {
        byte[] bytes = new byte[8];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** Removes the directories in {@code home} whose switch process is gone; home is this user's alone. */
    private static void removeAbandoned(Path home) {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(home, PREFIX + "*")) {
            for (Path entry : entries) {
                String rest = entry.getFileName().toString().substring(PREFIX.length());
                int dash = rest.indexOf('-');
                long pid;
                try {
                    pid = Long.parseLong(dash < 0 ? rest : rest.substring(0, dash));
                } catch (NumberFormatException notOurs) {
                    continue;
                }
                if (ProcessHandle.of(pid).isEmpty()) {
                    LOG.info("removing {}, left by switch process {} which is gone", entry, pid);
                    deleteTree(entry);
                }
            }
        } catch (IOException | UncheckedIOException e) {
            LOG.debug("cannot look for abandoned shared-memory directories in {}: {}", home, e.getMessage());
        }
    }

    /**
     * Removes {@code root} and what it holds without following a link anywhere: each directory is
     * opened relative to its parent's handle and its entries deleted relative to its own, so swapping a
     * directory for a link meanwhile makes the removal fail, not wander.
     */
    static void deleteTree(Path root) {
        Path parent = root.toAbsolutePath().getParent();
        Path name = root.getFileName();
        try (DirectoryStream<Path> opened = Files.newDirectoryStream(parent)) {
            if (!(opened instanceof SecureDirectoryStream<Path> parentHandle)) {
                throw new IOException("this file system cannot remove a directory without following links");
            }
            try (SecureDirectoryStream<Path> directory = parentHandle.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
                deleteEntries(directory);
            }
            parentHandle.deleteDirectory(name);
        } catch (NoSuchFileException gone) {
            // already removed: nothing to do
        } catch (IOException | UncheckedIOException e) {
            LOG.warn("cannot remove the shared-memory directory {}: {}", root, e.getMessage());
        }
    }

    private static void deleteEntries(SecureDirectoryStream<Path> directory) throws IOException {
        for (Path entry : directory) {
            Path name = entry.getFileName();
            BasicFileAttributes attributes = directory.getFileAttributeView(name, BasicFileAttributeView.class,
                    LinkOption.NOFOLLOW_LINKS).readAttributes();
            if (attributes.isDirectory()) {
                try (SecureDirectoryStream<Path> child = directory.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
                    deleteEntries(child);
                }
                directory.deleteDirectory(name);
            } else {
                directory.deleteFile(name);
            }
        }
    }
}
