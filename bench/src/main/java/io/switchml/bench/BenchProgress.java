package io.switchml.bench;

import io.switchml.launch.AllReduceAlgorithm;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * Progress of a run, for long sweeps: a line when each (algorithm, workers) group starts and one after each row,
 * {@code [k/N] ring n=4 16MiB done in 1.23 s, elapsed 00:42, ~01:10 left}. The time left is extrapolated from the
 * bytes done so far, since every size runs the same iterations and large sizes dominate a sweep.
 */
final class BenchProgress {
    private final PrintStream out;
    private final LongSupplier nanoClock;
    private final int totalRows;
    private final long totalBytes;
    private final long start;
    private final io.switchml.collectives.Compression compression;
    private long lastEvent;
    private int rowsDone;
    private long bytesDone;

    BenchProgress(PrintStream out, BenchOptions options, LongSupplier nanoClock) {
        this.out = out;
        this.nanoClock = nanoClock;
        int groups = options.workers().size() * options.algorithms().size();
        this.totalRows = groups * options.sizes().size();
        this.totalBytes = groups * options.sizes().stream().mapToLong(Long::longValue).sum();
        this.start = nanoClock.getAsLong();
        this.compression = options.compression();
        this.lastEvent = start;
    }

    void groupStarted(AllReduceAlgorithm algorithm, int workers) {
        lastEvent = nanoClock.getAsLong();
        out.println(counter() + " " + algorithm.id() + " n=" + workers
                + (algorithm.describe(compression) != null ? " (" + algorithm.describe(compression) + ")" : "")
                + ": starting " + workers + " worker process" + (workers == 1 ? "" : "es"));
    }

    void rowDone(BenchRow row) {
        long now = nanoClock.getAsLong();
        rowsDone++;
        bytesDone += row.bytes();
        long elapsed = now - start;
        long left = (long) (elapsed * ((double) (totalBytes - bytesDone) / bytesDone));
        out.println(String.format(Locale.ROOT, "%s %s n=%d %s done in %.2f s, elapsed %s, ~%s left", counter(),
                row.algo(), row.workers(), ByteSize.format(row.bytes()), (now - lastEvent) / 1e9, clock(elapsed),
                clock(left)));
        lastEvent = now;
    }

    private String counter() {
        return "[" + rowsDone + "/" + totalRows + "]";
    }

    /** mm:ss, or h:mm:ss from an hour up. */
    static String clock(long nanos) {
        long s = Math.round(nanos / 1e9);
        return s >= 3600 ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%02d:%02d", s / 60, s % 60);
    }
}
