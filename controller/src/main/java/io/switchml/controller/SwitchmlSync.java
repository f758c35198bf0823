package io.switchml.controller;

import io.grpc.Status;
import io.switchml.protocol.ProtocolConstants;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * SwitchML's barrier and broadcast (service Sync of switchml.proto). Its requests name no session:
 * like SwitchML's controller, all callers of this controller meet in one sequence of barriers and
 * one of broadcasts, so one SwitchML job at a time may use them.
 *
 * <p>A barrier returns once num_workers callers are in it (callers are not ranked). A rank's k-th
 * broadcast meets the others' k-th, and all of them receive the root's value once every rank has
 * come (SwitchML's answers the root at once and the others once the root came). Every wait ends at
 * the latest after the timeout, with DEADLINE_EXCEEDED. Synchronized like {@link JobRegistry}.
 */
final class SwitchmlSync {
    private final ScheduledExecutorService timer;
    private final long timeoutMs;
    /** The barrier being filled; null when none is. Callers are keyed by order of arrival. */
    private Meeting<Boolean> barrier;
    private int nextBarrierArrival;
    /** Broadcasts being filled, oldest first. */
    private final List<Meeting<Long>> broadcasts = new ArrayList<>();

    /** Callers meeting: their number, the root (-1 for a barrier) and the rendezvous. */
    private record Meeting<V>(int workers, int root, Rendezvous<V> rendezvous) {
        Meeting(int workers, int root) {
            this(workers, root, new Rendezvous<>(workers));
        }
    }

    SwitchmlSync(ScheduledExecutorService timer, long timeoutMs) {
        this.timer = timer;
        this.timeoutMs = timeoutMs;
    }

    /** Parks the caller until num_workers callers are in the barrier; returns what to run if it goes away. */
    synchronized Runnable barrier(int workers, JobRegistry.Reply<Void> reply) {
        String problem = workersProblem(workers);
        if (problem != null) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "invalid Barrier request: " + problem));
            return () -> { };
        }
        if (barrier == null) {
            barrier = new Meeting<>(workers, -1);
            nextBarrierArrival = 0;
        } else if (barrier.workers() != workers) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "a barrier for num_workers " + workers
                    + " was called while " + barrier.rendezvous().values().size() + " callers wait in one for num_workers "
                    + barrier.workers() + "; every worker must give the same num_workers"));
            return () -> { };
        }
        Meeting<Boolean> meeting = barrier;
        int arrival = nextBarrierArrival++;
        Rendezvous.Waiter<Boolean> waiter = waiter(reply, values -> null);
        boolean complete = meeting.rendezvous().arrive(arrival, Boolean.TRUE, waiter,
                timer.schedule(() -> expireBarrier(meeting, arrival), timeoutMs, TimeUnit.MILLISECONDS));
        if (complete) {
            barrier = null;
            meeting.rendezvous().release();
        }
        return () -> withdraw(meeting, arrival, waiter);
    }

    private synchronized void expireBarrier(Meeting<Boolean> meeting, int arrival) {
        int present = meeting.rendezvous().values().size();
        meeting.rendezvous().expire(arrival, missing -> new ControlException(Status.DEADLINE_EXCEEDED, "barrier: waited "
                + timeoutMs + " ms but only " + present + " of " + meeting.workers() + " workers came"));
        forgetIfEmpty(meeting);
    }

    /** The caller that arrived as {@code key} went away (its call was cancelled): it no longer counts. */
    private synchronized <V> void withdraw(Meeting<V> meeting, int key, Rendezvous.Waiter<V> waiter) {
        if (meeting.rendezvous().withdraw(key, waiter)) {
            forgetIfEmpty(meeting);
        }
    }

    /**
     * Parks rank until every rank has called its broadcast of the same turn; answers root's value.
     * Returns what to run if the caller goes away.
     */
    synchronized Runnable broadcast(long value, int rank, int workers, int root, JobRegistry.Reply<Long> reply) {
        String problem = workersProblem(workers);
        if (problem == null && (rank < 0 || rank >= workers)) {
            problem = "rank " + Integer.toUnsignedString(rank) + " outside 0.." + (workers - 1);
        }
        if (problem == null && (root < 0 || root >= workers)) {
            problem = "root " + Integer.toUnsignedString(root) + " outside 0.." + (workers - 1);
        }
        if (problem != null) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "invalid Broadcast request: " + problem));
            return () -> { };
        }
        Meeting<Long> meeting = broadcasts.stream().filter(m -> !m.rendezvous().contains(rank)).findFirst().orElse(null);
        if (meeting == null) {
            meeting = new Meeting<>(workers, root);
            broadcasts.add(meeting);
        } else if (meeting.workers() != workers || meeting.root() != root) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "rank " + rank + " broadcasts from root " + root
                    + " among " + workers + " workers, but the ranks already in this broadcast use root " + meeting.root()
                    + " among " + meeting.workers() + "; every rank must make the same broadcasts in the same order"));
            return () -> { };
        }
        Meeting<Long> joined = meeting;
        Rendezvous.Waiter<Long> waiter = waiter(reply, values -> values.get(root));
        boolean complete = joined.rendezvous().arrive(rank, value, waiter,
                timer.schedule(() -> expireBroadcast(joined, rank), timeoutMs, TimeUnit.MILLISECONDS));
        if (complete) {
            broadcasts.remove(joined);
            joined.rendezvous().release();
        }
        return () -> withdraw(joined, rank, waiter);
    }

    private synchronized void expireBroadcast(Meeting<Long> meeting, int rank) {
        meeting.rendezvous().expire(rank, missing -> new ControlException(Status.DEADLINE_EXCEEDED, "broadcast from root "
                + meeting.root() + ": rank " + rank + " waited " + timeoutMs + " ms but ranks " + missing + " did not come"));
        forgetIfEmpty(meeting);
    }

    private void forgetIfEmpty(Meeting<?> meeting) {
        if (meeting.rendezvous().empty()) {
            broadcasts.remove(meeting);
            if (barrier == meeting) {
                barrier = null;
            }
        }
    }

    private static String workersProblem(int workers) {
        return workers >= 1 && workers <= ProtocolConstants.MAX_WORKERS ? null
                : "num_workers " + Integer.toUnsignedString(workers) + " outside 1.." + ProtocolConstants.MAX_WORKERS;
    }

    private static <V, T> Rendezvous.Waiter<V> waiter(JobRegistry.Reply<T> reply,
                                                       java.util.function.Function<Map<Integer, V>, T> answer) {
        return new Rendezvous.Waiter<>() {
            @Override
            public void released(Map<Integer, V> values) {
                reply.ok(answer.apply(values));
            }

            @Override
            public void failed(ControlException error) {
                reply.error(error);
            }
        };
    }
}
