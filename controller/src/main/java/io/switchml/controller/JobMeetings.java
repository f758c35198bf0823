package io.switchml.controller;

import io.grpc.Status;

import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A job's barriers and broadcasts (docs/ARCHITECTURE.md, section 6): each call of a rank is parked
 * until every rank has made the call with the same sequence number, then all are answered together
 * (a broadcast with the root's value); a rank whose wait runs out is told which ranks are missing.
 * Called on the {@link JobRegistry}'s agent; the expiry timers run there too.
 */
final class JobMeetings {
    private final ControllerAgent agent;
    private final ScheduledExecutorService timer;
    /** Bounds the calls waiting per job (its flood limit). */
    private final ControllerSecurity security;
    /** A leaf's link to its spine, which the leaf's calls go on to once its ranks are all in; null for no leaf. */
    private final SpineLink spine;

    JobMeetings(ControllerAgent agent, ScheduledExecutorService timer, ControllerSecurity security, SpineLink spine) {
        this.agent = agent;
        this.timer = timer;
        this.security = security;
        this.spine = spine;
    }

    /** Fails every waiting call of {@code job} with {@code error} (a rank died or left). */
    static void failAll(Job job, ControlException error) {
        job.meetings.values().forEach(m -> m.rendezvous.fail(error));
        job.meetings.clear();
    }

    /**
     * Parks a barrier (root = -1) or broadcast until every rank has called it with the same sequence
     * number; answers the root's value (empty for a barrier). {@code rootNumber} is a long so that a uint32
     * root of 2^31 or more (a negative int) is not mistaken for the barrier's -1.
     */
    void meet(Job job, int rank, long sequence, long rootNumber, byte[] value, int timeoutMs,
              JobRegistry.Reply<byte[]> reply) {
        if (rootNumber < -1 || rootNumber >= job.workers()) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "root " + rootNumber + " outside 0.."
                    + (job.workers() - 1)));
            return;
        }
        int root = (int) rootNumber;
        if (job.aborted()) {
            reply.error(new ControlException(Status.ABORTED, JobLiveness.abortDescription(job) + "; call #" + sequence
                    + " can never complete"));
            return;
        }
        if (timeoutMs < 1 || timeoutMs > JoinValidator.MAX_TIMEOUT_MS) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "timeout_ms " + Integer.toUnsignedString(timeoutMs)
                    + " outside 1.." + JoinValidator.MAX_TIMEOUT_MS));
            return;
        }
        if (!job.left.isEmpty()) {
            // A rank that left can never arrive: fail now rather than at the timeout.
            reply.error(new ControlException(Status.ABORTED, (job.left.size() == 1 ? "rank " + job.left.first()
                    : "ranks " + job.left) + " left job '" + job.name + "' earlier; call #" + sequence
                    + " can never complete"));
            return;
        }
        if (!job.meetings.containsKey(sequence) && job.meetings.size() >= security.maxMeetingsPerJob()) {
            reply.error(new ControlException(Status.RESOURCE_EXHAUSTED, "job '" + job.name + "' already has "
                    + job.meetings.size() + " barrier and broadcast calls waiting, its limit; call #" + sequence
                    + " is refused (do the ranks make the same calls in the same order?)"));
            return;
        }
        Job.Meeting meeting = job.meetings.computeIfAbsent(sequence, s -> new Job.Meeting(root, job.firstRank, job.ranks()));
        String kind = root < 0 ? "barrier" : "broadcast from root " + root;
        if (meeting.root != root) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "rank " + rank + " calls a " + kind + " as call #"
                    + sequence + " of job " + job.number + ", but other ranks called "
                    + (meeting.root < 0 ? "a barrier" : "a broadcast from root " + meeting.root)
                    + "; every rank must make the same sequence of barrier and broadcast calls"));
            return;
        }
        if (meeting.rendezvous.contains(rank)) {
            reply.error(new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " is already waiting in call #"
                    + sequence + " of job " + job.number));
            return;
        }
        Rendezvous.Waiter<byte[]> waiter = new Rendezvous.Waiter<>() {
            @Override
            public void released(Map<Integer, byte[]> values) {
                reply.ok(root < 0 ? new byte[0] : values.get(root));
            }

            @Override
            public void failed(ControlException error) {
                reply.error(error);
            }
        };
        boolean complete = meeting.rendezvous.arrive(rank, value, waiter,
                timer.schedule(() -> expireMeeting(job, sequence, rank, kind), timeoutMs, TimeUnit.MILLISECONDS));
        if (complete && job.spine != null) {
            relay(job, sequence, meeting, timeoutMs);
        } else if (complete) {
            job.meetings.remove(sequence);
            meeting.rendezvous.release();
        }
    }

    /**
     * A leaf's ranks are all in (docs/ARCHITECTURE.md section 9): the call goes on to the spine once,
     * as this leaf's, with the root's value if the root is one of its ranks; the spine's answer
     * releases them. The meeting stays in the job's table meanwhile, so that an abort fails it.
     */
    private void relay(Job job, long sequence, Job.Meeting meeting, int timeoutMs) {
        meeting.relaying = true;
        int root = meeting.root;
        byte[] value = root >= 0 && job.serves(root) ? meeting.rendezvous.values().get(root) : new byte[0];
        spine.meet(job, sequence, root, value, timeoutMs, new JobRegistry.Reply<>() {
            @Override
            public void ok(byte[] answer) {
                if (job.meetings.remove(sequence, meeting)) {
                    meeting.rendezvous.release(Map.of(root, answer));
                }
            }

            @Override
            public void error(ControlException error) {
                if (job.meetings.remove(sequence, meeting)) {
                    meeting.rendezvous.fail(error);
                }
            }
        });
    }

    private void expireMeeting(Job job, long sequence, int rank, String kind) {
        agent.callback(() -> expireMeetingOnAgent(job, sequence, rank, kind));
    }

    private void expireMeetingOnAgent(Job job, long sequence, int rank, String kind) {
        Job.Meeting meeting = job.meetings.get(sequence);
        if (meeting == null || meeting.relaying) {
            return; // a relayed call ends with the spine's answer, or with the relay's own deadline
        }
        meeting.rendezvous.expire(rank, missing -> new ControlException(Status.DEADLINE_EXCEEDED, "job '" + job.name
                + "': rank " + rank + " waited in " + kind + " (call #" + sequence + ") but ranks " + missing
                + " are not there (never came, or gave up waiting); they may have died or be making different calls"));
        if (meeting.rendezvous.empty()) {
            job.meetings.remove(sequence);
        }
    }
}
