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
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of the switch's shared-memory port (docs/ARCHITECTURE.md section 11), in a directory of
 * its own (mode 0700): per installed job a result board ({@code job-<number>-<random>.results}, a new
 * name for each install, so that a worker never maps an earlier job's files) and a request ring for
 * each switch port the job's threads use ({@link RequestRing#fileName}).
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
     * The most request bytes a job's ring holds: a few windows of the largest (60 KiB) packets, and small enough to
     * stay in the cache between the worker that writes a packet and the switch thread that reads it (a 32 MiB ring
     * streamed every packet through memory). A worker whose packet does not fit waits.
     */
    static final int MAX_REQUEST_RING_BYTES = 4 << 20;
    /** The fewest: a ring of small jobs still takes a few dozen records at once. */
    static final int MIN_REQUEST_RING_BYTES = 64 << 10;
    /** Bytes a record takes in addition to its packet: Agrona's record header and the sender's identity. */
    private static final int RECORD_OVERHEAD_BYTES = 8 + RequestRing.IDENTITY_BYTES;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path directory;
    /** Switch ports, each read by its own thread: a job's threads are spread over them. */
    private final int portCount;

    private IpcDirectory(Path directory, int portCount) {
        this.directory = directory;
        this.portCount = portCount;
    }

    /** /dev/shm where it exists (memory, not disk), else the temporary directory. */
    static String defaultBase() {
        Path shm = Paths.get("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm.toString() : System.getProperty("java.io.tmpdir");
    }

    /**
     * Makes a fresh directory in this user's home under {@code base}, after removing there those of
     * switches that are gone, for a switch of {@code portCount} ports.
     */
    static IpcDirectory create(String base, int portCount) {
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
        return new IpcDirectory(directory, portCount);
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

    /**
     * An installed job's files: its result board, and its request rings, one for each switch port its threads use
     * ({@code rings[i]} is port i's; thread t's slots are port {@code t % ports}'s); {@code unlinked} once their names
     * are gone, after which nothing can open them to shrink them (a reader stops looking at their sizes).
     */
    record JobFiles(ResultBoard results, String boardFileName, RequestRing[] rings, AtomicBoolean unlinked) {
        /** Job {@code portIndex}'s ring, or null when none of the job's threads uses that port. */
        RequestRing ring(int portIndex) {
            return portIndex < rings.length ? rings[portIndex] : null;
        }
    }

    /**
     * New files for an installed job. Each ring starts with its reader's wake flag up: the port may be asleep
     * before it knows the ring, and the first writer then rings it.
     */
    JobFiles createJobFiles(JobSpec spec) {
        String boardFileName = "job-" + spec.jobNumber() + "-" + random() + ResultBoard.SUFFIX;
        ResultBoard board = ResultBoard.create(directory.resolve(boardFileName), spec.workers(), spec.slots(),
                spec.slotsPerThread(), spec.size().packetBytes());
        RequestRing[] rings = new RequestRing[Math.min(portCount, spec.threads())];
        try {
            for (int p = 0; p < rings.length; p++) {
                rings[p] = RequestRing.create(directory.resolve(RequestRing.fileName(boardFileName, p)),
                        requestRingBytes(spec, portCount, p));
                rings[p].readerSleeping().sleep();
            }
        } catch (RuntimeException e) {
            delete(new JobFiles(board, boardFileName, rings, new AtomicBoolean()));
            throw e;
        }
        return new JobFiles(board, boardFileName, rings, new AtomicBoolean());
    }

    /**
     * Bytes of the ring of port {@code portIndex} for this job: room for every packet its workers can have out at
     * once on that port's threads (one per slot each) twice over, retransmissions beside originals; a power of two
     * between {@link #MIN_REQUEST_RING_BYTES} and {@link #MAX_REQUEST_RING_BYTES}, and at least eight of the job's
     * records (Agrona's longest record is an eighth of the ring).
     */
    static int requestRingBytes(JobSpec spec, int portCount, int portIndex) {
        int threadsHere = (spec.threads() - portIndex + portCount - 1) / portCount;
        long record = align8(RECORD_OVERHEAD_BYTES + spec.size().packetBytes());
        long wanted = Math.max(2L * spec.workers() * threadsHere * spec.slotsPerThread() * record, 8 * record);
        long bytes = Math.min(Math.max(Long.highestOneBit(wanted - 1) << 1, MIN_REQUEST_RING_BYTES), MAX_REQUEST_RING_BYTES);
        return (int) bytes;
    }

    private static long align8(long bytes) {
        return (bytes + 7) & ~7L;
    }

    /**
     * Removes the names of a job's files, the rings' first; the switch and workers that mapped them keep their mappings until they let
     * them go, and nobody can open them any more. Removing them twice does nothing more.
     */
    void delete(JobFiles files) {
        for (int p = 0; p < files.rings().length; p++) {
            if (files.rings()[p] != null) {
                deleteFile(RequestRing.fileName(files.boardFileName(), p));
            }
        }
        deleteFile(files.boardFileName()); // last: a board's name gone says its rings' are too
        files.unlinked().set(true);
    }

    private void deleteFile(String fileName) {
        try {
            Files.deleteIfExists(directory.resolve(fileName));
        } catch (IOException e) {
            LOG.warn("cannot remove the shared-memory file {}: {}", fileName, e.getMessage());
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
