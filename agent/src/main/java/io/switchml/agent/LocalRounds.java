package io.switchml.agent;

import io.switchml.api.ReduceOp;

import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;

/**
 * Matches the all-reduces of a host's ranks that share one agent: each rank asks for the same tensors in the same
 * order (DDP's buckets, a training loop's calls), so the k-th request of every local rank makes the host's k-th
 * contribution, a {@link Round}. Requests that cannot belong together (other sizes, types or reductions), or a
 * rank's request after another rank said BYE, are the local ranks' steps differing: an error that names both.
 */
final class LocalRounds {
    /** The host's k-th all-reduce: each local rank's request id and byte offset in its own region. */
    record Round(long number, long[] ids, long[] offsets, int count, ReduceOp op, boolean floats) {
    }

    private final List<Integer> ranks;
    private final ArrayDeque<AgentRequest>[] waiting;
    private final boolean[] saidBye;
    private final Consumer<Round> onRound;
    private long rounds;

    /** For the local ranks {@code ranks} (the launch's numbers, in local order); {@code onRound} runs in round order. */
    @SuppressWarnings("unchecked")
    LocalRounds(List<Integer> ranks, Consumer<Round> onRound) {
        this.ranks = List.copyOf(ranks);
        this.waiting = new ArrayDeque[ranks.size()];
        for (int i = 0; i < waiting.length; i++) {
            waiting[i] = new ArrayDeque<>();
        }
        this.saidBye = new boolean[ranks.size()];
        this.onRound = onRound;
    }

    /**
     * Local rank {@code local}'s next request; hands the round on to {@code onRound} (on this thread, before any later
     * round) once every local rank has asked for it.
     *
     * @throws IllegalStateException when the local ranks' requests do not match
     */
    synchronized void offer(int local, AgentRequest request) {
        for (int other = 0; other < saidBye.length; other++) {
            if (saidBye[other]) {
                throw new IllegalStateException("rank " + ranks.get(local) + " asked for an all-reduce (request " + request.id()
                        + ") after rank " + ranks.get(other) + ", which shares this host's agent, said BYE: the local ranks' steps differ");
            }
        }
        waiting[local].add(request);
        for (ArrayDeque<AgentRequest> queue : waiting) {
            if (queue.isEmpty()) {
                return;
            }
        }
        long[] ids = new long[waiting.length];
        long[] offsets = new long[waiting.length];
        AgentRequest first = waiting[0].peek();
        for (int i = 0; i < waiting.length; i++) {
            AgentRequest r = waiting[i].poll();
            if (r.count() != first.count() || r.op() != first.op() || r.floats() != first.floats()) {
                throw new IllegalStateException("the local ranks' all-reduce " + rounds + " differs: rank " + ranks.get(0) + " asked for "
                        + describe(first) + ", rank " + ranks.get(i) + " for " + describe(r) + " (every rank must all-reduce the same tensors in the same order)");
            }
            ids[i] = r.id();
            offsets[i] = r.offset();
        }
        onRound.accept(new Round(rounds++, ids, offsets, (int) first.count(), first.op(), first.floats()));
    }

    /**
     * Local rank {@code local} said BYE.
     *
     * @throws IllegalStateException when another local rank's request waits for this one's
     */
    synchronized void bye(int local) {
        saidBye[local] = true;
        for (int other = 0; other < waiting.length; other++) {
            if (!waiting[other].isEmpty()) {
                throw new IllegalStateException("rank " + ranks.get(local) + " said BYE while rank " + ranks.get(other)
                        + "'s all-reduce (request " + waiting[other].peek().id() + ") waits for it: the local ranks' steps differ");
            }
        }
    }

    private static String describe(AgentRequest r) {
        return r.count() + " " + (r.floats() ? "f32" : "i32") + " elements (" + r.op().name().toLowerCase() + ")";
    }
}
