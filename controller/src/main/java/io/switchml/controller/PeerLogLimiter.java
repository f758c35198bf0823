package io.switchml.controller;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Log lines that peers cause, a bounded number per peer and in all per interval: beyond them lines
 * are counted, and the counts written when the interval ends (one line per peer, or one line for
 * all when many peers were counted). A flood from one address, or from many, costs a few lines a
 * minute, not a line a message. At most {@link #MAX_PEERS} peers are remembered (least recently
 * heard forgotten first, their counts kept for the next summary), so a flood from many addresses
 * cannot grow it either.
 */
final class PeerLogLimiter {
    static final int MAX_PEERS = 1024;
    /** Beyond this many peers with counts, one summary line covers them all. */
    static final int MAX_SUMMARY_LINES = 8;

    private final String what;
    private final long intervalNanos;
    private final int perPeer;
    private final int total;
    private final LongSupplier nanoClock;
    private final Consumer<String> out;
    private final Map<String, Window> windows = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Window> eldest) {
            if (size() <= MAX_PEERS) {
                return false;
            }
            forgotten.add(eldest.getKey(), eldest.getValue().suppressed);
            return true;
        }
    };
    /** Counts of peers forgotten before their interval was written out. */
    private final Tally forgotten = new Tally();
    private boolean totalStarted;
    private long totalStartedAt;
    private int totalLogged;
    private long suppressed;

    /** One line per peer per interval, no bound in all: {@link #PeerLogLimiter(String, Duration, int, int, LongSupplier, Consumer)}. */
    PeerLogLimiter(String what, Duration interval, LongSupplier nanoClock, Consumer<String> out) {
        this(what, interval, 1, Integer.MAX_VALUE, nanoClock, out);
    }

    /**
     * @param what     what the counted lines were about, plural, for the summary ("malformed requests")
     * @param interval how long a peer's budget of lines lasts
     * @param perPeer  lines written per peer per interval
     * @param total    lines written per interval in all, whoever causes them
     * @param out      where the lines and summaries go (a logger's warn)
     */
    PeerLogLimiter(String what, Duration interval, int perPeer, int total, LongSupplier nanoClock, Consumer<String> out) {
        this.what = what;
        this.intervalNanos = interval.toNanos();
        this.perPeer = perPeer;
        this.total = total;
        this.nanoClock = nanoClock;
        this.out = out;
    }

    /** Writes {@code line} to this limiter's output if the peer's budget and the total allow; otherwise counts it. */
    void log(String peer, String line) {
        log(peer, line, out);
    }

    /** The same, writing {@code line} to {@code to} (another level); summaries go to this limiter's output. */
    void log(String peer, String line, Consumer<String> to) {
        String summary = null;
        String written;
        synchronized (this) {
            long now = nanoClock.getAsLong();
            Window window = windows.get(peer);
            if (window != null && now - window.startedAt >= intervalNanos) {
                summary = window.summary(peer);
                window = null;
            }
            if (window == null) {
                window = new Window(now);
                windows.put(peer, window);
            }
            if (!totalStarted || now - totalStartedAt >= intervalNanos) {
                totalStarted = true;
                totalStartedAt = now;
                totalLogged = 0;
            }
            if (window.logged >= perPeer || totalLogged >= total) {
                window.suppressed++;
                suppressed++;
                written = null;
            } else {
                window.logged++;
                totalLogged++;
                written = window.logged < perPeer && totalLogged < total ? line
                        : line + " (more " + (window.logged < perPeer ? "from anyone" : "from " + peer) + " within "
                        + Duration.ofNanos(intervalNanos).toSeconds() + " s are counted, not logged)";
            }
        }
        if (summary != null) {
            out.accept(summary);
        }
        if (written != null) {
            to.accept(written);
        }
    }

    /** Ends the intervals that are over: writes their counts and forgets those peers. Run once an interval. */
    void flush() {
        List<String> lines = new ArrayList<>();
        synchronized (this) {
            long now = nanoClock.getAsLong();
            List<Map.Entry<String, Window>> counted = new ArrayList<>();
            for (Iterator<Map.Entry<String, Window>> it = windows.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, Window> e = it.next();
                if (now - e.getValue().startedAt >= intervalNanos) {
                    if (e.getValue().suppressed > 0) {
                        counted.add(Map.entry(e.getKey(), e.getValue()));
                    }
                    it.remove();
                }
            }
            if (counted.size() + (forgotten.peers > 0 ? 1 : 0) <= MAX_SUMMARY_LINES) {
                counted.forEach(c -> lines.add(c.getValue().summary(c.getKey())));
            } else {
                counted.forEach(c -> forgotten.add(c.getKey(), c.getValue().suppressed));
            }
            if (forgotten.peers > 0) {
                lines.add(forgotten.describe());
                forgotten.clear();
            }
        }
        lines.forEach(out);
    }

    synchronized int peers() {
        return windows.size();
    }

    /** Lines counted instead of written, since the start. */
    synchronized long suppressed() {
        return suppressed;
    }

    private final class Window {
        final long startedAt;
        int logged;
        long suppressed;

        Window(long startedAt) {
            this.startedAt = startedAt;
        }

        String summary(String peer) {
            return suppressed == 0 ? null : peer + ": " + suppressed + " more " + what + " in the "
                    + Duration.ofNanos(intervalNanos).toSeconds() + " s after the " + (logged == 1 ? "one" : logged + "")
                    + " logged";
        }
    }

    /** Counts of many peers, written as one line that names the three with most. */
    private final class Tally {
        final Map<String, Long> top = new LinkedHashMap<>();
        long peers;
        long count;

        void add(String peer, long suppressed) {
            if (suppressed == 0) {
                return;
            }
            peers++;
            count += suppressed;
            top.put(peer, suppressed);
            if (top.size() > 3) {
                top.entrySet().stream().min(Map.Entry.comparingByValue()).map(Map.Entry::getKey).ifPresent(top::remove);
            }
        }

        String describe() {
            return count + " more " + what + " from " + peers + " peers, not logged (most from "
                    + String.join(", ", top.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
                    .map(e -> e.getKey() + ": " + e.getValue()).toList()) + ")";
        }

        void clear() {
            top.clear();
            peers = 0;
            count = 0;
        }
    }
}
