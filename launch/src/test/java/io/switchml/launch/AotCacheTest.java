package io.switchml.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ahead-of-time cache of one role: who trains it, who reads it, what a claim left by a dead JVM becomes, and,
 * on a real JDK 25 where the machine has one, that the cache a child writes at exit is whole and usable while the
 * child's standard output carries only its own lines.
 */
class AotCacheTest {
    @TempDir
    Path dir;

    private Path jar(String name) throws IOException {
        return probeJar(dir.resolve(name));
    }

    /** Writes a jar holding {@link AotProbe} at {@code jar} (the JDK's cache takes jars only). */
    static Path probeJar(Path jar) throws IOException {
        String entry = AotProbe.class.getName().replace('.', '/') + ".class";
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
             InputStream in = AotProbe.class.getClassLoader().getResourceAsStream(entry)) {
            out.putNextEntry(new JarEntry(entry));
            in.transferTo(out);
            out.closeEntry();
        }
        return jar;
    }

    private AotCache cache(String role, int feature, String classPath) {
        return AotCache.of(role, null, feature, dir.resolve("aot"), "jdk", List.of("--enable-native-access=ALL-UNNAMED"),
                classPath).orElseThrow();
    }

    @Test
    void onlyJdk25AndJarsAndAnEnabledSettingGetACache() throws IOException {
        String jar = jar("a.jar").toString();
        Path folder = dir.resolve("aot");
        assertThat(AotCache.of("worker", null, 24, folder, "jdk", List.of(), jar)).isEmpty();
        assertThat(AotCache.of("worker", "off", 25, folder, "jdk", List.of(), jar)).isEmpty();
        assertThat(AotCache.of("worker", null, 25, folder, "jdk", List.of(), jar + ":" + dir)).as("a folder on the path")
                .isEmpty();
        assertThat(AotCache.of("worker", null, 25, null, "jdk", List.of(), jar)).as("no home to keep it in").isEmpty();
        assertThat(AotCache.of("worker", "auto", 25, folder, "jdk", List.of(), jar)).isPresent();
        assertThatThrownBy(() -> AotCache.enabled("sometimes")).isInstanceOf(LaunchException.class)
                .hasMessage("SWITCHML_AOT must be auto or off, not 'sometimes'");
        assertThat(AotCache.folder(Map.of(AotCache.FOLDER_SETTING, "/x/y"))).isEqualTo(Path.of("/x/y"));
        assertThat(AotCache.folder(Map.of("XDG_CACHE_HOME", "/c"))).isEqualTo(Path.of("/c/switchml/aot"));
    }

    @Test
    void theKeyChangesWithTheJarsTheRoleTheJdkAndTheOptions() throws IOException {
        Path jar = jar("a.jar");
        Path folder = dir.resolve("aot");
        Path first = cache("worker", 25, jar.toString()).cache();
        assertThat(cache("worker", 25, jar.toString()).cache()).isEqualTo(first);
        assertThat(cache("switch", 25, jar.toString()).cache()).isNotEqualTo(first);
        assertThat(AotCache.of("worker", null, 25, folder, "other jdk", List.of("--enable-native-access=ALL-UNNAMED"),
                jar.toString()).orElseThrow().cache()).isNotEqualTo(first);
        assertThat(AotCache.of("worker", null, 25, folder, "jdk", List.of(), jar.toString()).orElseThrow().cache())
                .isNotEqualTo(first);
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().plusSeconds(5)));   // a rebuilt jar
        assertThat(cache("worker", 25, jar.toString()).cache()).isNotEqualTo(first);
    }

    @Test
    void theFirstJvmTrainsWhileTheOthersRunPlainThenEveryOneReads() throws Exception {
        AotCache cache = cache("worker", 25, jar("a.jar").toString());
        AotCache.Plan first = cache.plan();
        assertThat(first.trains()).isTrue();
        assertThat(first.options()).contains("-XX:AOTCacheOutput=" + cache.cache(), "-XX:+DisplayVMOutputToStderr");
        assertThat(cache.plan().options()).as("claimed, its JVM starting").isEmpty();
        first.started(ProcessHandle.current());
        assertThat(cache.plan().options()).as("its JVM alive").isEmpty();

        // The trainer ends having written the cache whole (the JDK removed its .aot.config): everyone reads it.
        Files.writeString(cache.cache(), "cache");
        first.started(endedProcess());
        AotCache.Plan later = cache.plan();
        assertThat(later.trains()).isFalse();
        assertThat(later.options()).containsExactly("-XX:AOTCache=" + cache.cache(), "-Xlog:aot*=off", "-Xlog:cds*=off");
        assertThat(cache.plan().options()).isEqualTo(later.options());
    }

    @Test
    void aTrainerThatDiedWithoutAWholeCacheMarksItsKeyFailedAndNoneTrainsItAgain() throws Exception {
        AotCache cache = cache("worker", 25, jar("a.jar").toString());
        AotCache.Plan first = cache.plan();
        Path assembling = Path.of(cache.cache() + ".config");
        Files.writeString(cache.cache(), "half");
        Files.writeString(assembling, "left behind");
        first.started(endedProcess());
        assertThat(cache.plan().options()).isEmpty();
        assertThat(cache.failed()).exists();
        assertThat(cache.cache()).doesNotExist();
        assertThat(assembling).doesNotExist();
        assertThat(cache.plan().options()).isEmpty();
    }

    @Test
    void aClaimWhoseJvmNeverStartedLapsesAndAnAbandonedOneIsGivenBack() throws Exception {
        AotCache cache = cache("worker", 25, jar("a.jar").toString());
        AotCache.Plan first = cache.plan();
        first.abandoned();
        AotCache.Plan second = cache.plan();
        assertThat(second.trains()).as("the claim was given back").isTrue();
        Path claim = Files.list(dir.resolve("aot")).filter(f -> f.toString().endsWith(".lock")).findFirst().orElseThrow();
        Files.setLastModifiedTime(claim, FileTime.from(Instant.now().minus(AotCache.UNCLAIMED).minusSeconds(1)));
        assertThat(cache.plan().options()).as("an unnamed claim older than a minute, no cache").isEmpty();
        assertThat(cache.failed()).exists();
    }

    @Test
    void olderBuildsCachesOfARoleGoPastTheNewestFour() throws Exception {
        Path jar = jar("a.jar");
        List<Path> caches = new ArrayList<>();
        for (int build = 0; build < 6; build++) {
            Files.setLastModifiedTime(jar, FileTime.from(Instant.now().plusSeconds(build)));
            AotCache cache = cache("worker", 25, jar.toString());
            AotCache.Plan plan = cache.plan();
            assertThat(plan.trains()).isTrue();
            Files.writeString(cache.cache(), "cache " + build);
            Files.setLastModifiedTime(cache.cache(), FileTime.from(Instant.now().minusSeconds(100 - build)));
            plan.started(endedProcess());
            caches.add(cache.cache());
        }
        AotCache other = cache("switch", 25, jar.toString());
        other.plan();
        assertThat(caches.subList(0, 1)).allSatisfy(c -> assertThat(c).doesNotExist());
        assertThat(caches.subList(2, 6)).allSatisfy(c -> assertThat(c).exists());
        try (Stream<Path> files = Files.list(dir.resolve("aot"))) {
            assertThat(files.filter(f -> f.getFileName().toString().startsWith("worker-"))
                    .filter(f -> f.toString().endsWith(".aot")).count()).isEqualTo(4);
        }
    }

    /** On a real JDK 25: the child that trains writes a whole cache at exit, a JVM that must use it can. */
    @Test
    void aRealJdk25WritesTheCacheAtExitAndTheNextJvmUsesIt() throws Exception {
        Optional<Path> java = jdk25();
        assumeTrue(java.isPresent(), "no JDK 25 on this machine (SWITCHML_JAVA, /usr/lib/jvm): the cache needs one");
        String classPath = jar("probe.jar").toString();
        AotCache cache = AotCache.of("probe", null, 25, dir.resolve("aot"), java.get().toString(), List.of(), classPath)
                .orElseThrow();
        AotCache.Plan training = cache.plan();
        Result trained = run(java.get(), training, List.of(), classPath);
        assertThat(trained.out()).as("the JDK's notices stay off standard output").containsExactly("probe 59999997");
        assertThat(trained.err()).allSatisfy(line -> assertThat(ChildJvm.jvmNotice(line)).as(line).isTrue());
        assertThat(cache.cache()).isRegularFile();

        AotCache.Plan reading = cache.plan();
        assertThat(reading.options()).first().isEqualTo("-XX:AOTCache=" + cache.cache());
        // AOTMode=on: the JVM refuses to start unless it can map the cache.
        Result read = run(java.get(), reading, List.of("-XX:AOTMode=on"), classPath);
        assertThat(read.out()).containsExactly("probe 59999997");
        assertThat(read.err()).isEmpty();
    }

    private record Result(List<String> out, List<String> err) {
    }

    private Result run(Path java, AotCache.Plan plan, List<String> more, String classPath) throws Exception {
        List<String> command = new ArrayList<>(List.of(java.toString()));
        command.addAll(plan.options());
        command.addAll(more);
        command.addAll(List.of("-cp", classPath, AotProbe.class.getName()));
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        plan.started(p.toHandle());
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the probe JVM ends").isTrue();
        assertThat(p.exitValue()).as(Files.readString(err)).isZero();
        return new Result(Files.readAllLines(out, StandardCharsets.UTF_8), Files.readAllLines(err, StandardCharsets.UTF_8));
    }

    private static ProcessHandle endedProcess() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        return p.toHandle();
    }

    /** A JDK 25 or later on this machine (SWITCHML_JAVA, /usr/lib/jvm), if there is one. */
    static Optional<Path> jdk25() throws IOException {
        List<Path> candidates = new ArrayList<>();
        String set = System.getenv("SWITCHML_JAVA");
        if (set != null && !set.isBlank()) {
            candidates.add(Path.of(set));
        }
        Path jvms = Path.of("/usr/lib/jvm");
        if (Files.isDirectory(jvms)) {
            try (Stream<Path> homes = Files.list(jvms)) {
                homes.sorted().forEach(home -> candidates.add(home.resolve("bin/java")));
            }
        }
        for (Path java : candidates) {
            Path release = java.toAbsolutePath().getParent().getParent().resolve("release");
            if (Files.isExecutable(java) && Files.isRegularFile(release)
                    && Files.readString(release).matches("(?s).*JAVA_VERSION=\"(2[5-9]|[3-9][0-9])[^\"]*\".*")) {
                return Optional.of(java);
            }
        }
        return Optional.empty();
    }
}
