package io.switchml.controller;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Log lines about what peers do wrong, at most one per peer per interval: the first of an interval
 * is written, the others of that interval counted and written as one summary when it ends. A flood
 * from one address costs a line a minute, not a line a message. At most {@link #MAX_PEERS} peers are
 * remembered (least recently heard forgotten first, their count written out as they go), so a flood
 * from many addresses cannot grow it either.
 */
final class PeerLogLimiter {
    static final int MAX_PEERS = 1024;

    private final String what;
    private final long intervalNanos;
    private final LongSupplier nanoClock;
    private final Consumer<String> out;
    private final Map<String, Window> windows = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Window> eldest) {
            if (size() <= MAX_PEERS) {
                return false;
            }
            eldest.getValue().summary(eldest.getKey()).ifPresent(evicted::add);
            return true;
        }
    };
    /** Summaries of peers forgotten during the current call, written once the lock is released. */
    private final List<String> evicted = new ArrayList<>();

    /**
     * @param what     what the peers did, plural, for the summary ("malformed requests")
     * @param interval how long after a peer's logged line its next ones are only counted
     * @param out      where the lines go (a logger's warn)
     */
    PeerLogLimiter(String what, Duration interval, LongSupplier nanoClock, Consumer<String> out) {
        this.what = what;
        this.intervalNanos = interval.toNanos();
        this.nanoClock = nanoClock;
        this.out = out;
    }

    /** Writes {@code line} if it is the peer's first in its interval; otherwise counts it. */
    void log(String peer, String line) {
        List<String> lines = new ArrayList<>(2);
        synchronized (this) {
            long now = nanoClock.getAsLong();
            Window window = windows.get(peer);
            if (window != null && now - window.startedAt < intervalNanos) {
                window.suppressed++;
                return;
            }
            if (window != null) {
                window.summary(peer).ifPresent(lines::add);
            }
            windows.put(peer, new Window(now));
            lines.addAll(evicted);
            evicted.clear();
            lines.add(line + " (more from " + peer + " within " + Duration.ofNanos(intervalNanos).toSeconds()
                    + " s are counted, not logged)");
        }
        lines.forEach(out);
    }

    /** Ends the intervals that are over: writes their summaries and forgets those peers. Run once an interval. */
    void flush() {
        List<String> lines = new ArrayList<>();
        synchronized (this) {
            long now = nanoClock.getAsLong();
            for (Iterator<Map.Entry<String, Window>> it = windows.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, Window> e = it.next();
                if (now - e.getValue().startedAt >= intervalNanos) {
                    e.getValue().summary(e.getKey()).ifPresent(lines::add);
                    it.remove();
                }
            }
        }
        lines.forEach(out);
    }

    synchronized int peers() {
        return windows.size();
    }

    private final class Window {
        final long startedAt;
        long suppressed;

        Window(long startedAt) {
            this.startedAt = startedAt;
        }

        Optional<String> summary(String peer) {
            return suppressed == 0 ? Optional.empty() : Optional.of(peer + ": " + suppressed + " more "
                    + what + " in the " + Duration.ofNanos(intervalNanos).toSeconds() + " s after the one logged");
        }
    }
}
