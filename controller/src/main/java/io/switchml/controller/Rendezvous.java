package io.switchml.controller;

import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ScheduledFuture;

/**
 * A meeting of the n ranks of a job: each rank arrives with a value and a way to answer it; once
 * all have arrived the owner {@link #release releases} them together, each getting every rank's
 * value. A rank whose wait runs out is answered with the ranks still missing and leaves. Not
 * thread-safe: the {@link JobRegistry} serializes every call.
 */
final class Rendezvous<V> {
    /** How a waiting rank is answered. */
    interface Waiter<V> {
        void released(Map<Integer, V> values);

        void failed(ControlException error);
    }

    private final int first;
    private final int parties;
    private final Map<Integer, V> values = new TreeMap<>();
    private final Map<Integer, Waiter<V>> waiters = new TreeMap<>();
    private final Map<Integer, ScheduledFuture<?>> timers = new TreeMap<>();

    Rendezvous(int parties) {
        this(0, parties);
    }

    /** A meeting of ranks {@code first..first+parties-1} (a leaf's share of a job's ranks). */
    Rendezvous(int first, int parties) {
        this.first = first;
        this.parties = parties;
    }

    boolean contains(int rank) {
        return waiters.containsKey(rank);
    }

    Map<Integer, V> values() {
        return values;
    }

    /** Registers a rank; returns true when every rank is now here. */
    boolean arrive(int rank, V value, Waiter<V> waiter, ScheduledFuture<?> timeout) {
        values.put(rank, value);
        waiters.put(rank, waiter);
        timers.put(rank, timeout);
        return values.size() == parties;
    }

    /** Answers every rank with all values. */
    void release() {
        release(Map.copyOf(values));
    }

    /** Answers every rank with {@code answer} instead of the values they brought (what a spine answered). */
    void release(Map<Integer, V> answer) {
        timers.values().forEach(t -> t.cancel(false));
        waiters.values().forEach(w -> w.released(answer));
        clear();
    }

    /** Answers every rank with an error. */
    void fail(ControlException error) {
        timers.values().forEach(t -> t.cancel(false));
        waiters.values().forEach(w -> w.failed(error));
        clear();
    }

    /**
     * The rank's wait ran out: it leaves and is told which ranks had not arrived.
     * {@code describe} turns the missing ranks into the error.
     */
    void expire(int rank, java.util.function.Function<TreeSet<Integer>, ControlException> describe) {
        Waiter<V> waiter = waiters.remove(rank);
        if (waiter == null) {
            return;
        }
        TreeSet<Integer> missing = missing();
        values.remove(rank);
        timers.remove(rank);
        waiter.failed(describe.apply(missing));
    }

    /**
     * Takes back rank's arrival without answering it (its caller is gone), if {@code waiter} is
     * still the one waiting for it; returns whether it was.
     */
    boolean withdraw(int rank, Waiter<V> waiter) {
        if (waiters.get(rank) != waiter) {
            return false;
        }
        waiters.remove(rank);
        values.remove(rank);
        ScheduledFuture<?> timer = timers.remove(rank);
        if (timer != null) {
            timer.cancel(false);
        }
        return true;
    }

    /** Ranks that have not arrived. */
    TreeSet<Integer> missing() {
        TreeSet<Integer> missing = new TreeSet<>();
        for (int r = first; r < first + parties; r++) {
            if (!values.containsKey(r)) {
                missing.add(r);
            }
        }
        return missing;
    }

    boolean empty() {
        return waiters.isEmpty();
    }

    private void clear() {
        values.clear();
        waiters.clear();
        timers.clear();
    }
}
