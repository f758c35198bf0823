package io.switchml.controller;

import io.grpc.Status;
import io.switchml.controller.proto.JobEvent;
import io.switchml.dataplane.AggregationSwitch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;

/**
 * Whether a job's ranks are alive (docs/ARCHITECTURE.md, section 6): each rank of an installed job
 * holds a watch (a server stream) until it leaves. A watch that ends before its rank left, or a
 * promised watch that is not opened in time, means the rank died: the job is aborted, i.e. removed
 * from the switch (its slots freed, its name free for a new run), waiting barriers and broadcasts
 * fail, and the other ranks' watches are told which rank died. The aborted job keeps its number until
 * none of its ranks holds a watch. Works on the {@link JobRegistry}'s tables on its agent; the
 * callbacks of ending streams and of timers run there too.
 */
final class JobLiveness implements SpineLink.Events {
    private static final Logger LOG = LoggerFactory.getLogger(JobLiveness.class);

    private final ControllerAgent agent;
    private final AggregationSwitch dataplane;
    private final Map<String, Job> byName;
    private final Job[] byNumber;
    private final JobEndings endings;
    private final JobLog log;
    /** Set when the service shuts down: the watches it cancels then are not deaths. */
    private boolean closing;

    JobLiveness(ControllerAgent agent, AggregationSwitch dataplane, Map<String, Job> byName, Job[] byNumber, JobEndings endings,
                JobLog log) {
        this.log = log;
        this.agent = agent;
        this.dataplane = dataplane;
        this.byName = byName;
        this.byNumber = byNumber;
        this.endings = endings;
    }

    /**
     * Registers rank's watch and sends it WATCHING; on a job that was aborted, sends RANKS_FAILED
     * and ends it. Returns what to run when the watch ends without the server ending it (the
     * client cancelled it, or its connection broke).
     */
    Runnable watch(Job job, int rank, JobRegistry.Watcher watcher) {
        if (job.aborted()) {
            watcher.event(failedEvent(job));
            watcher.end();
            return () -> { };
        }
        if (job.left.contains(rank)) {
            watcher.error(new ControlException(Status.FAILED_PRECONDITION, "rank " + rank + " has already left job '"
                    + job.name + "'"));
            return () -> { };
        }
        if (job.watches.containsKey(rank)) {
            watcher.error(new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " of job '" + job.name
                    + "' is already watched; each rank opens one watch"));
            return () -> { };
        }
        cancelWatchDeadline(job, rank);
        job.watches.put(rank, watcher);
        watcher.event(JobEvent.newBuilder().setKind(JobEvent.Kind.WATCHING).setJobName(job.name)
                .setJobNumber(job.number).build());
        return () -> watchEnded(job, rank, watcher);
    }

    /** Rank left the job: its watch is no longer awaited, and the server ends it (not a death). */
    void rankLeft(Job job, int rank) {
        cancelWatchDeadline(job, rank);
        JobRegistry.Watcher watcher = job.watches.remove(rank);
        if (watcher != null) {
            watcher.end();
        }
    }

    private static void cancelWatchDeadline(Job job, int rank) {
        ScheduledFuture<?> deadline = job.watchDeadlines.remove(rank);
        if (deadline != null) {
            deadline.cancel(false);
        }
    }

    /** The service is shutting down; the calls it cancels do not abort jobs. */
    void close() {
        closing = true;
    }

    /** Rank's watch ended from the client's side: unless the rank left first, it died. */
    private void watchEnded(Job job, int rank, JobRegistry.Watcher watcher) {
        agent.callback(() -> watchEndedOnAgent(job, rank, watcher));
    }

    private void watchEndedOnAgent(Job job, int rank, JobRegistry.Watcher watcher) {
        if (closing || job.watches.get(rank) != watcher) {
            return; // ended by the server (leave), or already replaced
        }
        job.watches.remove(rank);
        if (!job.aborted() && byNumber[job.number] == job) {
            abort(job, List.of(rank), "the connection of rank " + rank + " to the controller ended before the rank left the job"
                    + " (its process died or was killed, stopped answering keepalive pings, or lost the network)");
        }
        forgetIfDone(job);
    }

    /** A rank promised a watch and has not opened it in time. */
    void watchMissing(Job job, int rank, int graceMs) {
        agent.callback(() -> watchMissingOnAgent(job, rank, graceMs));
    }

    private void watchMissingOnAgent(Job job, int rank, int graceMs) {
        job.watchDeadlines.remove(rank);
        if (job.aborted() || byNumber[job.number] != job || job.watches.containsKey(rank) || job.left.contains(rank)) {
            return;
        }
        abort(job, List.of(rank), "rank " + rank + " did not open its watch within " + graceMs
                + " ms of the job forming (it died after joining, or never got the answer)");
    }

    /**
     * Ends a running job whose ranks all went silent (see {@code JobRegistry.reclaimIdle}): off the switch,
     * waiting calls failed, and any watch still open told why. Called on the agent.
     */
    void reclaim(Job job, String reason) {
        endRunning(job, JobEndings.Reason.IDLE, reason);
    }

    /**
     * The operator ends a running job ({@code switchml ctl end-session NUMBER}): as {@link #reclaim}, its ranks'
     * watches told why. Returns false when the job is not running. Called on the agent.
     */
    boolean endByOperator(Job job, String who) {
        if (!running(job)) {
            return false;
        }
        endRunning(job, JobEndings.Reason.OPERATOR, "the operator (" + who + ") ended it");
        return true;
    }

    private void endRunning(Job job, JobEndings.Reason why, String reason) {
        if (!running(job)) {
            return;
        }
        endings.ended(why);
        end(job, reason, Status.ABORTED);
        JobEvent event = failedEvent(job);
        job.watches.values().forEach(w -> w.event(event));
        log.warn(LOG, job.tenant, abortDescription(job));
        forgetIfDone(job);
    }

    /**
     * Declares a rank dead: removes the job from the switch, fails waiting barriers and broadcasts
     * and tells every other rank's watch. The job stays known by number until no watch is left.
     */
    private void abort(Job job, Collection<Integer> ranks, String reason) {
        endings.ended(JobEndings.Reason.RANK_FAILED);
        job.failed.addAll(ranks);
        if (job.spine != null) {
            job.spine.drop(); // the spine aborts its job, and the other leaves theirs (docs/ARCHITECTURE.md section 9)
        }
        end(job, reason, Status.ABORTED);
        JobEvent event = failedEvent(job);
        job.watches.values().forEach(w -> w.event(event));
        log.warn(LOG, job.tenant, abortDescription(job) + "; telling ranks " + job.watches.keySet());
    }

    /**
     * Aborts {@code job} for {@code reason}: off the switch (its slots freed) and out of the names, no watch
     * awaited any more, waiting barriers and broadcasts failed with {@code status}. Returns that failure.
     */
    private ControlException end(Job job, String reason, Status status) {
        job.abortReason = reason;
        dataplane.removeJob(job.number, log.dataplaneLines(job.tenant));
        byName.remove(job.name, job);
        job.watchDeadlines.values().forEach(t -> t.cancel(false));
        job.watchDeadlines.clear();
        ControlException failure = new ControlException(status, abortDescription(job));
        JobMeetings.failAll(job, failure);
        return failure;
    }

    static String abortDescription(Job job) {
        String because = job.failed.isEmpty() ? ""
                : " because rank" + (job.failed.size() == 1 ? " " + job.failed.first() : "s " + job.failed) + " died";
        return "job '" + job.name + "' (job number " + job.number + ") was aborted" + because + ": " + job.abortReason
                + "; the switch freed the job's slots";
    }

    /** A leaf's job: the spine aborted its job because other leaves dropped out; the ranks they serve are gone. */
    @Override
    public void spineAborted(Job job, List<Integer> failedRanks, String reason) {
        agent.callback(() -> {
            if (running(job)) {
                abort(job, failedRanks, reason);
            }
        });
    }

    /** A leaf's job: a worker at another leaf left; the local ranks hear it as they would from one switch. */
    @Override
    public void leftAtAnotherLeaf(Job job, int rank, long operations) {
        agent.callback(() -> {
            if (!running(job)) {
                return;
            }
            JobEvent event = rankLeftEvent(job, rank, operations);
            job.watches.values().forEach(w -> w.event(event));
        });
    }

    /** The event that tells a rank's watch that {@code rank} left after {@code operations} all-reduces. */
    static JobEvent rankLeftEvent(Job job, int rank, long operations) {
        return JobEvent.newBuilder().setKind(JobEvent.Kind.RANK_LEFT).setJobName(job.name).setJobNumber(job.number)
                .setLeftRank(rank).setLeftOperations(operations).build();
    }

    /**
     * A leaf's job lost its spine: the job is aborted and every local rank's watch ends with
     * UNAVAILABLE and the reason, as when a worker's own switch is gone (no rank died).
     */
    @Override
    public void spineLost(Job job, String reason) {
        agent.callback(() -> {
            if (closing || !running(job)) {
                return; // a leaf shutting down cancels its own spine watches: its workers see the leaf go
            }
            endings.ended(JobEndings.Reason.SPINE_LOST);
            ControlException lost = end(job, reason, Status.UNAVAILABLE);
            // Out of the table first: the watches' own end callbacks then find nothing to do.
            List<JobRegistry.Watcher> watchers = List.copyOf(job.watches.values());
            job.watches.clear();
            watchers.forEach(w -> w.error(lost));
            log.warn(LOG, job.tenant, abortDescription(job));
            forgetIfDone(job);
        });
    }

    private boolean running(Job job) {
        return job.installed() && !job.aborted() && byNumber[job.number] == job;
    }

    private static JobEvent failedEvent(Job job) {
        return JobEvent.newBuilder().setKind(JobEvent.Kind.RANKS_FAILED).setJobName(job.name).setJobNumber(job.number)
                .addAllFailedRanks(job.failed).setReason(job.abortReason).build();
    }

    /** An aborted job is forgotten (its number freed) once none of its ranks holds a watch. */
    void forgetIfDone(Job job) {
        if (job.aborted() && job.watches.isEmpty() && byNumber[job.number] == job) {
            byNumber[job.number] = null;
            log.info(LOG, job.tenant, "aborted job '" + job.name + "' (job number " + job.number
                    + ") forgotten: no rank watches it any more");
        }
    }
}
