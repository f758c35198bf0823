package io.switchml.bench;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Counts one process's system calls between {@link #start()} and {@link #stop()}, with perf's
 * {@code raw_syscalls:sys_enter} tracepoint counted in the kernel: the process runs at full speed.
 * perf attaches with its counters off and turns them on and off when told on its control FIFO, which
 * it acknowledges, so the count covers exactly that stretch of the process's run. perf counts the threads the
 * process has when it attaches (a benchmark worker's have all started by then: they ran its warm-up). Needs perf
 * (Debian: linux-perf) and the right to trace the process (root, or {@code kernel.perf_event_paranoid} <= 1).
 */
final class SyscallCounter implements AutoCloseable {
    static final String EVENT = "raw_syscalls:sys_enter";
    private static final long REPLY_SECONDS = 10;
    private static final Pattern COUNT = Pattern.compile("^(\\d+),[^,]*," + Pattern.quote(EVENT) + ",");

    private final long pid;
    private final Path dir;
    private final Process perf;
    private final RandomAccessFile control;
    private final RandomAccessFile acknowledgements;

    private SyscallCounter(long pid, Path dir, Process perf, RandomAccessFile control, RandomAccessFile acknowledgements) {
        this.pid = pid;
        this.dir = dir;
        this.perf = perf;
        this.control = control;
        this.acknowledgements = acknowledgements;
    }

    /** Null when perf can count system calls here; else why not, as an error message says it. */
    static String unavailableReason() {
        try {
            Finished probe = finish("perf", "stat", "-x,", "-e", EVENT, "--", "true");
            if (!probe.ended()) {
                return "perf stat did not finish within " + REPLY_SECONDS + " s";
            }
            if (probe.code() != 0 || probe.output().lines().noneMatch(l -> COUNT.matcher(l).find())) {
                return "perf cannot count " + EVENT + " here (run as root, or sysctl kernel.perf_event_paranoid=1): "
                        + probe.output().strip();
            }
            return null;
        } catch (IOException e) {
            return "perf was not found (Debian: apt-get install linux-perf): " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while trying perf";
        }
    }

    /** Attaches perf to process {@code pid}, counting nothing until {@link #start()}. */
    static SyscallCounter attach(long pid) {
        Path dir = null;
        Process perf = null;
        try {
            dir = Files.createTempDirectory("switchml-syscalls-");
            Path ctl = dir.resolve("ctl");
            Path ack = dir.resolve("ack");
            run("mkfifo", "-m", "600", ctl.toString(), ack.toString());
            // perf counts the process while its command runs: cat, which ends when stop() closes its input.
            perf = new ProcessBuilder("perf", "stat", "-x,", "-e", EVENT, "-D", "-1", "--control",
                    "fifo:" + ctl + "," + ack, "-o", dir.resolve("count").toString(), "-p", Long.toString(pid), "--", "cat")
                    .redirectErrorStream(true).redirectOutput(dir.resolve("perf.log").toFile()).start();
            // Opened for reading and writing, a FIFO opens at once, whether or not perf has opened it yet.
            return new SyscallCounter(pid, dir, perf, new RandomAccessFile(ctl.toFile(), "rw"),
                    new RandomAccessFile(ack.toFile(), "rw"));
        } catch (IOException e) {
            if (perf != null) {
                perf.destroyForcibly();
            }
            delete(dir);
            throw new BenchException("cannot count the system calls of process " + pid + ": " + e.getMessage());
        }
    }

    /** Counts from now on; returns once perf said its counters are on. */
    void start() {
        command("enable");
    }

    /** Stops counting and returns the system calls the process made since {@link #start()}. */
    long stop() {
        command("disable");
        try {
            perf.getOutputStream().close();
            if (!perf.waitFor(REPLY_SECONDS, TimeUnit.SECONDS)) {
                throw new BenchException("perf counting process " + pid + " did not end within " + REPLY_SECONDS + " s"
                        + perfLog());
            }
            try (Stream<String> lines = Files.lines(dir.resolve("count"))) {
                return lines.map(COUNT::matcher).filter(Matcher::find).findFirst()
                        .map(m -> Long.parseLong(m.group(1)))
                        // perf writes <not counted> when the process made no call while counting.
                        .orElse(0L);
            }
        } catch (IOException e) {
            throw new BenchException("cannot read perf's count of process " + pid + ": " + e.getMessage() + perfLog());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted while reading perf's count of process " + pid);
        }
    }

    private void command(String command) {
        try {
            control.write((command + "\n").getBytes(StandardCharsets.US_ASCII));
            // Read on another thread: a FIFO read cannot time out, and perf may have died (its target gone).
            CompletableFuture<String> acknowledged = CompletableFuture.supplyAsync(this::readAcknowledgement);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(REPLY_SECONDS);
            String reply = null;
            while (reply == null) {
                try {
                    reply = acknowledged.get(100, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    if (!perf.isAlive()) {
                        throw new BenchException("perf stopped before acknowledging '" + command + "' (is process " + pid
                                + " gone?)" + perfLog());
                    }
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                }
            }
            if (!"ack".equals(reply)) {
                throw new BenchException("perf answered '" + reply + "' to '" + command + "'" + perfLog());
            }
        } catch (IOException | ExecutionException e) {
            throw new BenchException("cannot tell perf to " + command + " counting process " + pid + ": " + e.getMessage()
                    + perfLog());
        } catch (TimeoutException e) {
            throw new BenchException("perf did not acknowledge '" + command + "' within " + REPLY_SECONDS + " s (is"
                    + " process " + pid + " still running?)" + perfLog());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted while waiting for perf to " + command + " counting");
        }
    }

    private String readAcknowledgement() {
        try {
            String line = acknowledgements.readLine();
            // perf writes its "ack\n" with the string's terminating NUL, which starts the next line read.
            return line == null ? "" : line.replace("\0", "").strip();
        } catch (IOException e) {
            throw new BenchException("cannot read perf's acknowledgement: " + e.getMessage());
        }
    }

    private String perfLog() {
        try {
            String log = Files.readString(dir.resolve("perf.log")).strip();
            return log.isEmpty() ? "" : "; perf said: " + log;
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        perf.destroyForcibly();
        try {
            control.close();
            acknowledgements.close();
        } catch (IOException e) {
            // the FIFOs are deleted next
        }
        delete(dir);
    }

    private static void run(String... command) throws IOException {
        try {
            Finished finished = finish(command);
            if (!finished.ended() || finished.code() != 0) {
                throw new IOException(String.join(" ", command) + " failed: " + finished.output().strip());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + command[0], e);
        }
    }

    /** How a short command ended: whether within {@link #REPLY_SECONDS}, its exit code, its output and errors. */
    private record Finished(boolean ended, int code, String output) {
    }

    /** Runs a short command to its end, or kills it after {@link #REPLY_SECONDS}. */
    private static Finished finish(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(REPLY_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Finished(false, -1, out);
        }
        return new Finished(true, p.exitValue(), out);
    }

    private static void delete(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind says nothing about the count
        }
    }
}
