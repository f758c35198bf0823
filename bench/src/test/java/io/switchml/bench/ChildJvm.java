package io.switchml.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A main class of the test class path run in its own JVM: its standard output kept line by line
 * (and echoed with a prefix), its standard error echoed. {@link #close} kills it.
 */
final class ChildJvm implements AutoCloseable {
    private final String name;
    private final Process process;
    private final List<String> lines = new ArrayList<>();

    ChildJvm(String name, Class<?> main, String... args) throws IOException {
        this.name = name;
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        process = new ProcessBuilder(command).start();
        process.getOutputStream().close();
        pump(process.getInputStream(), true);
        pump(process.getErrorStream(), false);
    }

    private void pump(InputStream stream, boolean keep) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    System.err.println("[" + name + "] " + line);
                    if (keep) {
                        synchronized (lines) {
                            lines.add(line);
                            lines.notifyAll();
                        }
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
        }, name + (keep ? "-stdout" : "-stderr"));
        t.setDaemon(true);
        t.start();
    }

    /** The first output line that matches, waiting up to {@code millis}; null if none came. */
    String awaitLine(Predicate<String> match, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        synchronized (lines) {
            while (true) {
                for (String line : lines) {
                    if (match.test(line)) {
                        return line;
                    }
                }
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return null;
                }
                lines.wait(left);
            }
        }
    }

    /** The exit status once the process ends within {@code millis}, else null. */
    Integer exitCode(long millis) throws InterruptedException {
        return process.waitFor(millis, TimeUnit.MILLISECONDS) ? process.exitValue() : null;
    }

    /** Kills the process as a crash would (SIGKILL) and waits for it to be gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /**
     * Stops the process (SIGSTOP) without closing anything: to its peers it looks like a hung
     * process or a host that vanished, which only keepalive timeouts reveal.
     */
    void freeze() throws IOException, InterruptedException {
        int status = new ProcessBuilder("kill", "-STOP", String.valueOf(process.pid())).start().waitFor();
        if (status != 0) {
            throw new IOException("kill -STOP " + process.pid() + " failed with status " + status);
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
