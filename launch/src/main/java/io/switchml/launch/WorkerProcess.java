package io.switchml.launch;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A worker in its own JVM, started by a launcher with this JVM's class path: its standard output
 * handed over line by line (a benchmark worker's reports and, for {@code ring} and {@code ps}, its
 * endpoints), its standard error echoed with a rank prefix and its last lines kept for error
 * messages. Its standard input stays open until {@link #send} (ring, ps: the peers' endpoints) and
 * is closed at once for {@code switchml}.
 */
public final class WorkerProcess {
    private static final int KEPT_ERROR_LINES = 20;

    private final int rank;
    private final Process process;
    private final Deque<String> lastErrors = new ArrayDeque<>();
    private final List<Thread> pumps = new ArrayList<>();

    private WorkerProcess(int rank, Process process) {
        this.rank = rank;
        this.process = process;
    }

    /**
     * Options from {@code SWITCHML_WORKER_JAVA_OPTS}, split at white space: for profiling the
     * worker JVMs (JFR, perf maps) without changing the bench.
     */
    private static List<String> extraJvmOptions() {
        String options = System.getenv("SWITCHML_WORKER_JAVA_OPTS");
        return options == null || options.isBlank() ? List.of() : List.of(options.trim().split("\\s+"));
    }

    /**
     * Starts {@code mainClass} with this JVM's class path in a new JVM.
     *
     * @param jvmOptions  options before the class name (heap size, system properties)
     * @param environment variables to set in its environment, on top of this process's
     * @param stdinOpen   keep its standard input open for one {@link #send} (ring, ps: the peers' endpoints)
     * @param stdoutLines receives each line of its standard output; its standard error is echoed to {@code errors}
     *                    with a rank prefix, and its last lines kept for {@link #lastErrors}
     */
    public static WorkerProcess start(List<String> prefix, int rank, String mainClass, List<String> args,
                                      List<String> jvmOptions, Map<String, String> environment, boolean stdinOpen,
                                      Consumer<String> stdoutLines, PrintStream errors) {
        List<String> command = new ArrayList<>(prefix);
        ChildJvm jvm = ChildJvm.of("worker");
        command.addAll(jvm.command());
        command.addAll(jvmOptions);
        command.addAll(extraJvmOptions());
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.PIPE);
        builder.environment().putAll(environment);
        try {
            WorkerProcess worker = new WorkerProcess(rank, start(builder, jvm));
            if (!stdinOpen) {
                worker.process.getOutputStream().close();
            }
            worker.pump("stdout", worker.process.getInputStream(), stdoutLines);
            worker.pump("stderr", worker.process.getErrorStream(), line -> {
                if (ChildJvm.jvmNotice(line) || line.isBlank()) {
                    return;   // the JDK's own notices, and blank lines: a "[rank N]" with nothing after it says nothing
                }
                worker.keep(line);
                errors.println("[rank " + rank + "] " + line);
            });
            return worker;
        } catch (IOException e) {
            throw new IllegalStateException("cannot start worker process " + rank + ": " + e.getMessage(), e);
        }
    }

    private static Process start(ProcessBuilder builder, ChildJvm jvm) throws IOException {
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            jvm.notStarted();
            throw e;
        }
        jvm.started(process);
        return process;
    }

    /** Writes one line to the worker's standard input, then closes it. */
    public void send(String line) {
        try (var in = process.getOutputStream()) {
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // the process ended; its exit code and standard error tell why
        }
    }

    private void pump(String name, java.io.InputStream stream, java.util.function.Consumer<String> sink) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    sink.accept(line);
                }
            } catch (IOException e) {
                // the process ended; its exit code tells the rest
            }
        }, "worker-" + rank + "-" + name);
        t.setDaemon(true);
        t.start();
        pumps.add(t);
    }

    private synchronized void keep(String line) {
        lastErrors.addLast(line);
        if (lastErrors.size() > KEPT_ERROR_LINES) {
            lastErrors.removeFirst();
        }
    }

    public synchronized String lastErrors() {
        return String.join("\n", lastErrors);
    }

    public int rank() {
        return rank;
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** The exit code once the process has ended and its output is read, or null if it still runs. */
    public Integer exitCode(long waitMs) throws InterruptedException {
        if (!process.waitFor(waitMs, TimeUnit.MILLISECONDS)) {
            return null;
        }
        for (Thread t : pumps) {
            t.join(1_000);
        }
        return process.exitValue();
    }

    public void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }
}
