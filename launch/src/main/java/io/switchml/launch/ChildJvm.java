package io.switchml.launch;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How this project starts a JVM of its own (a worker, a rack's switch): the java that runs this one, so that
 * children get the JDK the switchml command chose (the newest 21+ there is); the Vector API's module where this JVM
 * has it, so that they run the same payload kernels (docs/ARCHITECTURE.md section 13); on JDK 24+ the options that
 * let its libraries (Netty, JNA, Agrona, protobuf) use native access and {@code sun.misc.Unsafe} without a warning
 * each; and on JDK 25+ the role's ahead-of-time cache (section 18).
 */
public final class ChildJvm {
    static final String VECTOR_MODULE = "jdk.incubator.vector";
    /** What every JVM started with an incubator module prints first on its standard error. */
    private static final String INCUBATOR_NOTICE = "WARNING: Using incubator modules: " + VECTOR_MODULE;
    /** The first JDK that warns about native access and {@code sun.misc.Unsafe}'s memory methods by default. */
    static final int FIRST_WARNING_FEATURE = 24;
    /**
     * What a JDK prints on the standard error of a JVM that writes its ahead-of-time cache at exit (with
     * {@code -XX:+DisplayVMOutputToStderr}), the assembling JVM's options included.
     */
    private static final List<String> CACHE_NOTICES = List.of("Temporary AOTConfiguration recorded: ",
            "Launching child process ", "Reading AOTConfiguration ", "AOTCache creation is complete: ",
            "Removed temporary AOT configuration file ");

    /** The children started here that write their role's cache when they exit. */
    private static final java.util.Set<Long> TRAINING = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final List<String> command;
    private final AotCache.Plan cache;

    ChildJvm(List<String> command, AotCache.Plan cache) {
        this.command = command;
        this.cache = cache;
    }

    /** A child of {@code role} ({@code worker}, {@code switch}: one ahead-of-time cache each) like this JVM. */
    public static ChildJvm of(String role) {
        List<String> options = options(ModuleLayer.boot().findModule(VECTOR_MODULE).isPresent(),
                Runtime.version().feature());
        AotCache.Plan cache = AotCache.forChildOf(role, options).map(AotCache::plan).orElse(AotCache.Plan.NONE);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(options);
        command.addAll(cache.options());
        return new ChildJvm(List.copyOf(command), cache);
    }

    /** The options that make a child like a JVM of {@code feature} that has (or not) the Vector API's module. */
    static List<String> options(boolean vectorModule, int feature) {
        List<String> options = new ArrayList<>();
        if (vectorModule) {
            options.add("--add-modules=" + VECTOR_MODULE);
        }
        if (feature >= FIRST_WARNING_FEATURE) {
            options.add("--enable-native-access=ALL-UNNAMED");
            options.add("--sun-misc-unsafe-memory-access=allow");
        }
        return options;
    }

    /** The java command and the options that make a child like this JVM, before the child's own options. */
    public List<String> command() {
        return command;
    }

    /** Tells the role's cache which process started with {@link #command()}. */
    public void started(Process process) {
        cache.started(process.toHandle());
        if (cache.trains()) {
            // Kept here rather than read back from the process's command line, which the platform may not report.
            TRAINING.add(process.pid());
            process.onExit().thenRun(() -> TRAINING.remove(process.pid()));
        }
    }

    /** Tells the role's cache that the process did not start. */
    public void notStarted() {
        cache.abandoned();
    }

    /** Whether a child started with {@link #command()} writes its role's ahead-of-time cache when it exits. */
    public static boolean writesCacheAtExit(ProcessHandle child) {
        return TRAINING.contains(child.pid());
    }

    /**
     * Whether a child's line on its standard error is the JDK's own notice about what {@link #command()} asked
     * for (the incubator module, the ahead-of-time cache it writes at exit): not worth echoing.
     */
    public static boolean jvmNotice(String line) {
        if (line.equals(INCUBATOR_NOTICE)) {
            return true;
        }
        if (line.startsWith("Picked up JAVA_TOOL_OPTIONS: ") && line.contains("-XX:AOTMode=create")) {
            return true;
        }
        return line.contains("AOT") && CACHE_NOTICES.stream().anyMatch(line::startsWith);
    }
}
