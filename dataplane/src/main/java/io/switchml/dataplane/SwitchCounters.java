package io.switchml.dataplane;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The counters of one receive thread (a shard). Only that thread writes them, with plain
 * increments published as opaque stores, so counting costs no atomic instruction and no
 * contention; any thread may read them at any time, getting each counter's latest or a recent value.
 */
final class SwitchCounters {
    private static final VarHandle COUNTS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final SwitchCounter[] EVENTS = SwitchCounter.values();
    private static final DropReason[] REASONS = DropReason.values();
    /** Longs of padding on each side, so that two shards' counters never share a cache line. */
    private static final int PAD = 8;

    private final long[] counts = new long[PAD + EVENTS.length + REASONS.length + PAD];

    /** Owner thread only. */
    void increment(SwitchCounter counter) {
        add(PAD + counter.ordinal());
    }

    /** Owner thread only. */
    void increment(DropReason reason) {
        add(PAD + EVENTS.length + reason.ordinal());
    }

    long get(SwitchCounter counter) {
        return (long) COUNTS.getOpaque(counts, PAD + counter.ordinal());
    }

    long get(DropReason reason) {
        return (long) COUNTS.getOpaque(counts, PAD + EVENTS.length + reason.ordinal());
    }

    /**
     * The sums over the shards, by stable name: the {@link SwitchCounter} names, then
     * {@code drops_<reason>} for every {@link DropReason}, in declaration order.
     */
    static Map<String, Long> snapshot(List<SwitchCounters> shards) {
        Map<String, Long> totals = new LinkedHashMap<>();
        for (SwitchCounter counter : EVENTS) {
            long sum = 0;
            for (SwitchCounters shard : shards) {
                sum += shard.get(counter);
            }
            totals.put(counter.counterName(), sum);
        }
        for (DropReason reason : REASONS) {
            long sum = 0;
            for (SwitchCounters shard : shards) {
                sum += shard.get(reason);
            }
            totals.put(reason.counterName(), sum);
        }
        return totals;
    }

    private void add(int index) {
        // The owner's plain read sees its own last write; the opaque store makes the value visible.
        COUNTS.setOpaque(counts, index, counts[index] + 1);
    }
}
