package io.switchml.launch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The JDK's ahead-of-time cache (JDK 25+) for one role of this project's JVMs: the classes a run loaded, linked,
 * and the method profiles it gathered, so that the next JVM of that role starts with them and its C2 compiles the
 * hot loops sooner (docs/ARCHITECTURE.md section 18).
 *
 * <p>One cache per role and key (the JDK, the class path's jars with their sizes and times, the module options):
 * {@code ROLE-KEY.aot} in the cache folder. The first JVM of a key trains it: it runs with
 * {@code -XX:AOTCacheOutput}, and the JDK writes the cache when that JVM exits. Its claim is
 * {@code ROLE-KEY.lock}, holding its pid; while the claim lives no other JVM of the key trains or reads. A claim
 * whose JVM ended with the cache whole (the JDK removes its {@code .aot.config} last) is dropped; one that ended
 * without it becomes {@code ROLE-KEY.failed}, and that key is not trained again. Every later JVM of the key runs
 * with {@code -XX:AOTCache}. Any doubt (an older JDK, a class path with folders, which the JDK's cache does not
 * take, a folder that cannot be written) means no options: the cache is a speed-up, never a condition.
 */
public final class AotCache {
    /** The first JDK whose cache keeps method profiles (and takes {@code -XX:AOTCacheOutput}). */
    public static final int FIRST_FEATURE = 25;
    /** {@code auto} (the default: used where the JDK has it) or {@code off}. */
    public static final String SETTING = "SWITCHML_AOT";
    /** The folder of the caches; default {@code $XDG_CACHE_HOME/switchml/aot}, else {@code ~/.cache/switchml/aot}. */
    public static final String FOLDER_SETTING = "SWITCHML_AOT_DIR";
    /** How long a claim with no pid yet (its JVM is starting) counts as live. */
    static final Duration UNCLAIMED = Duration.ofMinutes(1);
    /** Keys of one role kept in the folder: the newest; older builds' caches are removed. */
    static final int KEPT_KEYS = 4;

    private static final String TRAINING_OPTION = "-XX:AOTCacheOutput=";

    private final Path folder;
    private final String role;
    private final String name;

    AotCache(Path folder, String role, String key) {
        this.folder = folder;
        this.role = role;
        this.name = role + "-" + key;
    }

    /**
     * The cache of {@code role} for a JVM like this one (this JVM's JDK and class path) with {@code options};
     * empty where a cache cannot serve it.
     */
    public static Optional<AotCache> forChildOf(String role, List<String> options) {
        return of(role, System.getenv(SETTING), Runtime.version().feature(), folder(System.getenv()),
                System.getProperty("java.home") + " " + Runtime.version(), options,
                System.getProperty("java.class.path"));
    }

    static Optional<AotCache> of(String role, String setting, int feature, Path folder, String jdk, List<String> options,
                                 String classPath) {
        if (!enabled(setting) || feature < FIRST_FEATURE || folder == null) {
            return Optional.empty();
        }
        MessageDigest digest = sha256();
        update(digest, role);
        update(digest, jdk);
        options.forEach(option -> update(digest, option));
        for (String entry : classPath.split(java.io.File.pathSeparator)) {
            Path jar = Path.of(entry);
            try {
                if (!Files.isRegularFile(jar)) {
                    return Optional.empty();   // the JDK's cache takes jars only, no folders
                }
                update(digest, jar.toAbsolutePath() + " " + Files.size(jar) + " " + Files.getLastModifiedTime(jar).toMillis());
            } catch (IOException e) {
                return Optional.empty();
            }
        }
        try {
            Files.createDirectories(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
        if (!Files.isWritable(folder)) {
            return Optional.empty();
        }
        return Optional.of(new AotCache(folder, role, HexFormat.of().formatHex(digest.digest()).substring(0, 16)));
    }

    /** Whether a setting of {@link #SETTING} lets the cache be used. */
    static boolean enabled(String setting) {
        if (setting == null || setting.isBlank() || setting.equalsIgnoreCase("auto")) {
            return true;
        }
        if (setting.equalsIgnoreCase("off")) {
            return false;
        }
        throw new LaunchException(SETTING + " must be auto or off, not '" + setting + "'");
    }

    static Path folder(Map<String, String> environment) {
        String set = environment.get(FOLDER_SETTING);
        if (set != null && !set.isBlank()) {
            return Path.of(set);
        }
        String cacheHome = environment.get("XDG_CACHE_HOME");
        if (cacheHome != null && !cacheHome.isBlank()) {
            return Path.of(cacheHome, "switchml", "aot");
        }
        String home = System.getProperty("user.home");
        return home == null || home.isBlank() || home.equals("?") ? null : Path.of(home, ".cache", "switchml", "aot");
    }

    Path cache() {
        return folder.resolve(name + ".aot");
    }

    private Path lock() {
        return folder.resolve(name + ".lock");
    }

    Path failed() {
        return folder.resolve(name + ".failed");
    }

    /** The file the JDK writes while it assembles a cache and removes once the cache is whole. */
    private Path assembling() {
        return folder.resolve(name + ".aot.config");
    }

    /** What the next JVM of this role and key does: read the cache, train it, or neither. */
    public Plan plan() {
        try {
            if (Files.exists(failed())) {
                return Plan.NONE;
            }
            if (Files.exists(lock())) {
                if (live(lock())) {
                    return Plan.NONE;
                }
                if (!settle()) {
                    return Plan.NONE;
                }
            }
            if (Files.isRegularFile(cache())) {
                return new Plan(List.of("-XX:AOTCache=" + cache(), "-Xlog:aot*=off", "-Xlog:cds*=off"), null);
            }
            try {
                Files.createFile(lock());
            } catch (FileAlreadyExistsException e) {
                return Plan.NONE;   // another JVM claimed it a moment ago
            }
            removeOlderKeys();
            // The JDK prints what it does at exit on its output; the child's standard output carries its reports, so
            // that goes to standard error (where ChildJvm.jvmNotice leaves it out), and its warnings about classes
            // it cannot keep are not the user's business.
            return new Plan(List.of(TRAINING_OPTION + cache(), "-XX:+DisplayVMOutputToStderr", "-Xlog:aot*=off",
                    "-Xlog:cds*=off"), lock());
        } catch (IOException e) {
            return Plan.NONE;
        }
    }

    /** A claim whose JVM has ended: dropped where it left the cache whole; else the key is marked failed. */
    private boolean settle() throws IOException {
        if (Files.isRegularFile(cache()) && !Files.exists(assembling())) {
            Files.deleteIfExists(lock());
            return true;
        }
        Files.move(lock(), failed(), StandardCopyOption.REPLACE_EXISTING);
        Files.deleteIfExists(cache());
        Files.deleteIfExists(assembling());
        return false;
    }

    private static boolean live(Path lock) throws IOException {
        String pid;
        try {
            pid = Files.readString(lock, StandardCharsets.UTF_8).trim();
        } catch (java.nio.file.NoSuchFileException e) {
            return true;   // settled by another JVM just now: leave this one plain
        }
        if (pid.isEmpty()) {
            FileTime written = Files.getLastModifiedTime(lock);
            return written.toInstant().plus(UNCLAIMED).isAfter(Instant.now());
        }
        try {
            return ProcessHandle.of(Long.parseLong(pid)).map(ProcessHandle::isAlive).orElse(false);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** Removes the files of this role's older keys beyond the {@link #KEPT_KEYS} newest, and their markers. */
    private void removeOlderKeys() throws IOException {
        Map<String, List<Path>> byKey = new LinkedHashMap<>();
        try (Stream<Path> files = Files.list(folder)) {
            files.filter(f -> f.getFileName().toString().startsWith(role + "-"))
                    .forEach(f -> byKey.computeIfAbsent(keyOf(f), k -> new ArrayList<>()).add(f));
        }
        List<String> keys = new ArrayList<>(byKey.keySet());
        keys.sort(Comparator.comparing((String k) -> newest(byKey.get(k))).reversed());
        for (String key : keys.subList(Math.min(KEPT_KEYS, keys.size()), keys.size())) {
            for (Path f : byKey.get(key)) {
                Files.deleteIfExists(f);
            }
        }
    }

    private String keyOf(Path file) {
        String n = file.getFileName().toString().substring(role.length() + 1);
        int dot = n.indexOf('.');
        return dot < 0 ? n : n.substring(0, dot);
    }

    private static FileTime newest(List<Path> files) {
        FileTime newest = FileTime.fromMillis(0);
        for (Path f : files) {
            try {
                FileTime t = Files.getLastModifiedTime(f);
                if (t.compareTo(newest) > 0) {
                    newest = t;
                }
            } catch (IOException e) {
                // removed meanwhile
            }
        }
        return newest;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static void update(MessageDigest digest, String part) {
        digest.update(part.getBytes(StandardCharsets.UTF_8));
        digest.update((byte) 0);
    }

    /** The options of one JVM, and the claim it holds where it trains the cache. */
    public static final class Plan {
        static final Plan NONE = new Plan(List.of(), null);

        private final List<String> options;
        private final Path claim;

        Plan(List<String> options, Path claim) {
            this.options = options;
            this.claim = claim;
        }

        /** The JVM options, before the main class. */
        public List<String> options() {
            return options;
        }

        /** Whether this JVM writes the cache when it exits. */
        public boolean trains() {
            return claim != null;
        }

        /** Tells the claim which process trains, once it has started: others wait for it while it lives. */
        public void started(ProcessHandle process) {
            if (claim == null) {
                return;
            }
            try {
                Files.writeString(claim, Long.toString(process.pid()), StandardCharsets.UTF_8);
            } catch (IOException e) {
                // the claim stays unnamed and lapses after a minute: the next JVM reads no half-written cache, at worst
                // it marks this key failed
            }
        }

        /** Gives the claim up where the process could not start. */
        public void abandoned() {
            if (claim != null) {
                try {
                    Files.deleteIfExists(claim);
                } catch (IOException e) {
                    // it lapses after a minute
                }
            }
        }
    }
}
