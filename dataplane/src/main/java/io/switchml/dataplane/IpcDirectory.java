package io.switchml.dataplane;

import io.switchml.ipc.RequestRing;
import io.switchml.ipc.ResultBoard;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of the switch's shared-memory port (docs/ARCHITECTURE.md section 11), in a directory of
 * its own (mode 0700): a request ring per switch port ({@link RequestRing#fileName}) and a result
 * board per installed job ({@code job-<number>-<random>.results}, a new name for each install, so
 * that a worker never maps an earlier job's board). The directory's name carries the switch's
 * process id, so that a switch that finds the directory of one that died without cleaning up
 * removes it.
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

    /** Makes a fresh directory under {@code base}, after removing those of switches that are gone. */
    static IpcDirectory create(String base) {
        Path parent = Paths.get(base);
        removeAbandoned(parent);
        Path directory = parent.resolve(PREFIX + ProcessHandle.current().pid() + "-" + random());
        try {
            Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the switch's shared-memory directory " + directory + ": "
                    + e.getMessage() + " (set another base, or turn the shared-memory port off)", e);
        }
        return new IpcDirectory(directory);
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

    private static void removeAbandoned(Path parent) {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(parent, PREFIX + "*")) {
            for (Path entry : entries) {
                String rest = entry.getFileName().toString().substring(PREFIX.length());
                int dash = rest.indexOf('-');
                long pid;
                try {
                    pid = Long.parseLong(dash < 0 ? rest : rest.substring(0, dash));
                } catch (NumberFormatException notOurs) {
                    continue;
                }
                if (ProcessHandle.of(pid).isEmpty() && Files.isWritable(entry)) {
                    LOG.info("removing {}, left by switch process {} which is gone", entry, pid);
                    deleteTree(entry);
                }
            }
        } catch (IOException | UncheckedIOException e) {
            LOG.debug("cannot look for abandoned shared-memory directories in {}: {}", parent, e.getMessage());
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    LOG.warn("cannot remove {}: {}", p, e.getMessage());
                }
            });
        } catch (IOException | UncheckedIOException e) {
            LOG.warn("cannot remove the shared-memory directory {}: {}", root, e.getMessage());
        }
    }
}
