package io.switchml.controller;

import io.grpc.Status;
import io.switchml.controller.proto.DiagnoseResponse;
import io.switchml.controller.proto.JobDetailRequest;
import io.switchml.controller.proto.JobDetailResponse;
import io.switchml.controller.proto.JobEvent;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.InsufficientSlotsException;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.MissingRanks;
import io.switchml.dataplane.WorkerEndpoint;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The controller's state: jobs by name while they form, by job number once installed in the switch.
 * Every method is synchronized; waits never block a thread, they park a reply until a rendezvous
 * completes or its timer fires.
 *
 * <p>Liveness: each rank of an installed job holds a watch (a server stream) until it leaves. A watch
 * that ends before its rank left, or a promised watch that is not opened in time, means the rank
 * died: the job is <em>aborted</em>, i.e. removed from the switch (its slots freed, its name free for
 * a new run), waiting barriers and broadcasts fail, and the other ranks' watches are told which rank
 * died. The aborted job keeps its number, so that its survivors' late calls (leave, barrier) reach it
 * and not a new job, until none of its ranks holds a watch any more.
 */
final class JobRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(JobRegistry.class);

    /** Where a parked request's answer goes. */
    interface Reply<T> {
        void ok(T value);

        void error(ControlException error);
    }

    /** A rank's open watch: where its job's events go. Called with the registry's lock held. */
    interface Watcher {
        void event(JobEvent event);

        /** Ends the watch normally (the rank left, or it was told the job is over). */
        void end();

        /** Refuses the watch. */
        void error(ControlException error);
    }

    /** The most job names with an issued secret at once; issuing is the operator's, so this only bounds mistakes. */
    static final int MAX_ISSUED_SECRETS = 65_536;

    private final AggregationSwitch dataplane;
    private final ScheduledExecutorService timer;
    private final ControllerSecurity security;
    private final Map<String, Job> byName = new HashMap<>();
    /** Digests of the secrets the operator issued, by job name. */
    private final Map<String, byte[]> issuedSecrets = new HashMap<>();
    private final Job[] byNumber = new Job[ProtocolConstants.MAX_JOBS];
    /** Set when the service shuts down: the watches it cancels then are not deaths. */
    private boolean closing;

    JobRegistry(AggregationSwitch dataplane, ScheduledExecutorService timer) {
        this(dataplane, timer, new ControllerSecurity());
    }

    JobRegistry(AggregationSwitch dataplane, ScheduledExecutorService timer, ControllerSecurity security) {
        this.dataplane = dataplane;
        this.timer = timer;
        this.security = security;
    }

    /**
     * Issues a fresh secret for a job name (the operator's call): from now on a join of that name
     * must present it. Returns the secret; only its digest is kept.
     *
     * @throws ControlException INVALID_ARGUMENT for a bad name, FAILED_PRECONDITION when a job of that
     *                          name is forming or running (its ranks hold the old secret), RESOURCE_EXHAUSTED
     *                          beyond {@link #MAX_ISSUED_SECRETS} names
     */
    synchronized String issueSecret(String name) {
        if (name.isEmpty() || name.length() > JoinValidator.MAX_JOB_NAME) {
            throw new ControlException(Status.INVALID_ARGUMENT, "job name must have 1.." + JoinValidator.MAX_JOB_NAME
                    + " characters");
        }
        if (byName.containsKey(name)) {
            throw new ControlException(Status.FAILED_PRECONDITION, "job '" + name + "' is forming or running; issue its"
                    + " secret before its ranks join, or after it ends");
        }
        if (!issuedSecrets.containsKey(name) && issuedSecrets.size() >= MAX_ISSUED_SECRETS) {
            throw new ControlException(Status.RESOURCE_EXHAUSTED, "the switch already holds secrets for "
                    + MAX_ISSUED_SECRETS + " job names");
        }
        String secret = Secrets.fresh();
        issuedSecrets.put(name, Secrets.digest(secret));
        LOG.info("issued a secret for job '{}'", name);
        return secret;
    }

    /**
     * Parks the join until every rank has joined; then installs the job and answers it. Returns what
     * to run if the caller goes away while it waits (it takes the rank's arrival back).
     */
    synchronized Runnable join(JoinRequest request, Caller caller, Reply<Job> reply) {
        String problem = JoinValidator.problem(request);
        if (problem != null) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "invalid join request: " + problem));
            return () -> { };
        }
        String name = request.getJobName();
        int rank = request.getRank();
        Job job = byName.get(name);
        if (security.requireJobSecrets() && caller.jobSecretDigest() == null && !caller.operator()) {
            reply.error(new ControlException(Status.UNAUTHENTICATED, "rank " + rank + " cannot join job '" + name
                    + "': this switch requires a job secret; give every rank of the job the same one (switchml.jobSecretFile,"
                    + " or --job-secret-file), for instance one issued by the operator with `switchml ctl secret " + name + "`"));
            return () -> { };
        }
        byte[] required = job != null ? job.secretDigest : issuedSecrets.get(name);
        if ((job != null || required != null) && !caller.mayUse(required)) {
            // Says nothing about the job beyond that the secret does not fit.
            reply.error(new ControlException(Status.PERMISSION_DENIED, "rank " + rank + " cannot join job '" + name
                    + "': the job secret presented does not match the job's (the one its first rank presented, or the one"
                    + " the operator issued); every rank of a job presents the same secret"));
            return () -> { };
        }
        if (job != null && job.installed()) {
            reply.error(new ControlException(Status.FAILED_PRECONDITION, "job '" + name + "' is already running as job number "
                    + job.number + " with all " + job.workers() + " ranks; a rank cannot join it twice."
                    + " Wait for the job to end (every rank closes its context) or use another job name"));
            return () -> { };
        }
        String full = pendingJoinsFull(caller.peer());
        if (full != null) {
            reply.error(new ControlException(Status.RESOURCE_EXHAUSTED, "rank " + rank + " cannot join job '" + name
                    + "': " + full));
            return () -> { };
        }
        if (job == null) {
            job = new Job(name, request.getParameters(), required != null ? required : caller.jobSecretDigest());
            byName.put(name, job);
        } else if (!job.parameters.equals(request.getParameters())) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "rank " + rank + " joins job '" + name
                    + "' with parameters {" + describe(request.getParameters()) + "} but the ranks already waiting use {"
                    + describe(job.parameters) + "}; every worker of a job must be configured alike"));
            return () -> { };
        }
        if (job.joining.contains(rank)) {
            reply.error(new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " has already joined job '" + name
                    + "'; each rank joins once (is a rank number given to two workers?)"));
            return () -> { };
        }
        WorkerEndpoint endpoint = new WorkerEndpoint(JoinValidator.ipv4(request.getAddress()),
                request.getPortsList().stream().mapToInt(Integer::intValue).toArray());
        String clash = endpointClash(job, endpoint);
        if (clash != null) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, clash));
            return () -> { };
        }
        Job joining = job;
        Rendezvous.Waiter<WorkerEndpoint> waiter = new Rendezvous.Waiter<>() {
            @Override
            public void released(Map<Integer, WorkerEndpoint> values) {
                reply.ok(joining);
            }

            @Override
            public void failed(ControlException error) {
                reply.error(error);
            }
        };
        job.joinPeers.put(rank, caller.peer());
        if (request.getWatch()) {
            job.watchGraceMs.put(rank, request.getTimeoutMs());
        } else {
            job.watchGraceMs.remove(rank);
        }
        boolean complete = job.joining.arrive(rank, endpoint, waiter,
                timer.schedule(() -> expireJoin(joining, rank), request.getTimeoutMs(), TimeUnit.MILLISECONDS));
        if (complete) {
            install(job);
        }
        return () -> withdrawJoin(joining, rank, waiter);
    }

    /**
     * Why one more waiting rank from {@code peer} would exceed the caps on waiting joins, or null.
     * Counted afresh each time (at most {@link ControllerSecurity#maxPendingJoins} ranks), so that no
     * path that ends a wait can leave a count wrong.
     */
    private String pendingJoinsFull(java.net.InetAddress peer) {
        int total = 0;
        int fromPeer = 0;
        for (Job forming : byName.values()) {
            if (forming.installed()) {
                continue;
            }
            for (Integer r : forming.joining.values().keySet()) {
                total++;
                if (peer != null && peer.equals(forming.joinPeers.get(r))) {
                    fromPeer++;
                }
            }
        }
        if (total >= security.maxPendingJoins()) {
            return "the controller already holds " + total + " ranks waiting for their jobs to form, its limit; retry once"
                    + " jobs have formed or their joins timed out";
        }
        if (peer != null && fromPeer >= security.maxPendingJoinsPerPeer()) {
            return peer.getHostAddress() + " already has " + fromPeer + " ranks waiting for their jobs to form, the limit"
                    + " per address; retry once those jobs have formed or their joins timed out";
        }
        return null;
    }

    /** The number of ranks waiting for their jobs to form, for inspection and tests. */
    synchronized int pendingJoins() {
        int total = 0;
        for (Job forming : byName.values()) {
            if (!forming.installed()) {
                total += forming.joining.values().size();
            }
        }
        return total;
    }

    /** A joining rank's caller went away (its process died) while it waited: it no longer counts. */
    private synchronized void withdrawJoin(Job job, int rank, Rendezvous.Waiter<WorkerEndpoint> waiter) {
        if (job.installed() || !job.joining.withdraw(rank, waiter)) {
            return;
        }
        job.watchGraceMs.remove(rank);
        LOG.info("rank {} of job '{}' went away while waiting for the other ranks to join", rank, job.name);
        if (job.joining.empty()) {
            byName.remove(job.name, job);
        }
    }

    private String endpointClash(Job job, WorkerEndpoint endpoint) {
        for (Map.Entry<Integer, WorkerEndpoint> e : job.joining.values().entrySet()) {
            WorkerEndpoint other = e.getValue();
            if (other.address().equals(endpoint.address())) {
                for (int p : endpoint.ports()) {
                    if (Arrays.stream(other.ports()).anyMatch(q -> q == p)) {
                        return "UDP endpoint " + endpoint.address().getHostAddress() + ":" + p + " is already used by rank "
                                + e.getKey() + " of job '" + job.name + "'";
                    }
                }
            }
        }
        return null;
    }

    private synchronized void expireJoin(Job job, int rank) {
        job.joining.expire(rank, missing -> new ControlException(Status.DEADLINE_EXCEEDED, "job '" + job.name
                + "': rank " + rank + " waited for the other ranks to join, but ranks " + missing
                + " are not there (never joined, or gave up waiting); start every worker with the same job name and number of workers ("
                + job.workers() + ")"));
        if (job.joining.empty() && !job.installed()) {
            byName.remove(job.name, job);
        }
    }

    private void install(Job job) {
        int number = freeJobNumber();
        if (number < 0) {
            refuse(job, new ControlException(Status.RESOURCE_EXHAUSTED, "the switch already runs "
                    + ProtocolConstants.MAX_JOBS + " jobs; job '" + job.name + "' cannot be installed"));
            return;
        }
        JobParameters p = job.parameters;
        List<WorkerEndpoint> endpoints = new ArrayList<>(job.joining.values().values());
        SlotAdmission.Grant grant;
        try {
            grant = SlotAdmission.grant(job.name, p.getThreads(), p.getSlotsPerThread(), dataplane.slotPool());
            JobSpec installed = dataplane.installJob(new JobSpec(number, job.name,
                    PayloadSize.ofElements(p.getElementsPerPacket()), grant.slotsPerThread(), p.getThreads(), endpoints,
                    true, p.getOneRoundElements()));
            job.oneRoundElements = installed.oneRoundElements();
        } catch (ControlException e) {
            refuse(job, e);
            return;
        } catch (InsufficientSlotsException e) {
            // A SwitchML session took the slots between the grant and the installation.
            refuse(job, new ControlException(Status.RESOURCE_EXHAUSTED, "the switch refused job '" + job.name + "': "
                    + e.getMessage()));
            return;
        } catch (RuntimeException e) {
            refuse(job, new ControlException(Status.FAILED_PRECONDITION, "the switch refused job '" + job.name
                    + "': " + e.getMessage()));
            return;
        }
        job.grant = grant;
        if (grant.reduced()) {
            LOG.warn("{}", grant.reason());
        }
        job.number = number;
        job.id = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        // In rank order (Map.copyOf would iterate in an arbitrary order): Status lists the workers by rank.
        job.endpoints = Collections.unmodifiableMap(new TreeMap<>(job.joining.values()));
        byNumber[number] = job;
        LOG.info("job '{}' installed as job number {}: {} workers, {}", job.name, number, job.workers(), describe(p));
        job.watchGraceMs.forEach((rank, graceMs) -> job.watchDeadlines.put(rank,
                timer.schedule(() -> watchMissing(job, rank, graceMs), graceMs, TimeUnit.MILLISECONDS)));
        job.joining.release();
    }

    /** Fails every waiting rank of a job that cannot be installed, and forgets the job. */
    private void refuse(Job job, ControlException error) {
        LOG.warn("{}", error.getMessage());
        job.joining.fail(error);
        byName.remove(job.name, job);
    }

    /**
     * Registers rank's watch and sends it WATCHING; on a job that was aborted, sends RANKS_FAILED
     * and ends it. Returns what to run when the watch ends without the server ending it (the
     * client cancelled it, or its connection broke).
     */
    synchronized Runnable watch(int jobNumber, long jobId, int rank, Caller caller, Watcher watcher) {
        Job job = knownJob(jobNumber, jobId, rank, caller, watcher::error);
        if (job == null) {
            return () -> { };
        }
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
        ScheduledFuture<?> deadline = job.watchDeadlines.remove(rank);
        if (deadline != null) {
            deadline.cancel(false);
        }
        job.watches.put(rank, watcher);
        watcher.event(JobEvent.newBuilder().setKind(JobEvent.Kind.WATCHING).setJobName(job.name)
                .setJobNumber(job.number).build());
        return () -> watchEnded(job, rank, watcher);
    }

    /** The service is shutting down; the calls it cancels do not abort jobs. */
    synchronized void close() {
        closing = true;
    }

    /** Rank's watch ended from the client's side: unless the rank left first, it died. */
    private synchronized void watchEnded(Job job, int rank, Watcher watcher) {
        if (closing || job.watches.get(rank) != watcher) {
            return; // ended by the server (leave), or already replaced
        }
        job.watches.remove(rank);
        if (!job.aborted() && byNumber[job.number] == job) {
            abort(job, rank, "the connection of rank " + rank + " to the controller ended before the rank left the job"
                    + " (its process died or was killed, stopped answering keepalive pings, or lost the network)");
        }
        forgetIfDone(job);
    }

    /** A rank promised a watch and has not opened it in time. */
    private synchronized void watchMissing(Job job, int rank, int graceMs) {
        job.watchDeadlines.remove(rank);
        if (job.aborted() || byNumber[job.number] != job || job.watches.containsKey(rank) || job.left.contains(rank)) {
            return;
        }
        abort(job, rank, "rank " + rank + " did not open its watch within " + graceMs
                + " ms of the job forming (it died after joining, or never got the answer)");
    }

    /**
     * Declares a rank dead: removes the job from the switch, fails waiting barriers and broadcasts
     * and tells every other rank's watch. The job stays known by number until no watch is left.
     */
    private void abort(Job job, int rank, String reason) {
        job.failed.add(rank);
        job.abortReason = reason;
        dataplane.removeJob(job.number);
        byName.remove(job.name, job);
        job.watchDeadlines.values().forEach(t -> t.cancel(false));
        job.watchDeadlines.clear();
        ControlException aborted = new ControlException(Status.ABORTED, abortDescription(job));
        job.meetings.values().forEach(m -> m.rendezvous.fail(aborted));
        job.meetings.clear();
        JobEvent event = failedEvent(job);
        job.watches.values().forEach(w -> w.event(event));
        LOG.warn("{}; telling ranks {}", abortDescription(job), job.watches.keySet());
    }

    private static String abortDescription(Job job) {
        return "job '" + job.name + "' (job number " + job.number + ") was aborted because rank"
                + (job.failed.size() == 1 ? " " + job.failed.first() : "s " + job.failed) + " died: " + job.abortReason
                + "; the switch freed the job's slots";
    }

    private static JobEvent failedEvent(Job job) {
        return JobEvent.newBuilder().setKind(JobEvent.Kind.RANKS_FAILED).setJobName(job.name).setJobNumber(job.number)
                .addAllFailedRanks(job.failed).setReason(job.abortReason).build();
    }

    /** An aborted job is forgotten (its number freed) once none of its ranks holds a watch. */
    private void forgetIfDone(Job job) {
        if (job.aborted() && job.watches.isEmpty() && byNumber[job.number] == job) {
            byNumber[job.number] = null;
            LOG.info("aborted job '{}' (job number {}) forgotten: no rank watches it any more", job.name, job.number);
        }
    }

    /** What the controller and the switch know about a job that seems stuck. */
    synchronized DiagnoseResponse diagnose(int jobNumber, long jobId, Caller caller) {
        Job job = jobNumber >= 0 && jobNumber < byNumber.length ? byNumber[jobNumber] : null;
        if (job == null || (jobId != 0 && job.id != jobId) || !caller.mayUse(job.secretDigest)) {
            return DiagnoseResponse.newBuilder().setKnown(false).build();
        }
        DiagnoseResponse.Builder b = DiagnoseResponse.newBuilder().setKnown(true).setJobName(job.name)
                .addAllLeftRanks(job.left).addAllFailedRanks(job.failed);
        if (job.aborted()) {
            return b.setAbortedReason(job.abortReason).build();
        }
        MissingRanks missing = dataplane.missingRanks(jobNumber).orElse(null);
        if (missing != null) {
            b.setInstalled(true).addAllMissingRanks(missing.ranks()).setIncompleteSlots(missing.incompleteSlots());
        }
        return b.build();
    }

    /** The lowest number neither this registry nor anyone else (SwitchML sessions) uses on the switch. */
    private int freeJobNumber() {
        for (int i = 0; i < byNumber.length; i++) {
            if (byNumber[i] == null && dataplane.job(i).isEmpty()) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Parks a barrier (root = -1) or broadcast until every rank has called it with the same sequence
     * number; answers the root's value (empty for a barrier). {@code rootNumber} is a long so that a uint32
     * root of 2^31 or more (a negative int) is not mistaken for the barrier's -1.
     */
    synchronized void meet(int jobNumber, int rank, long sequence, long rootNumber, byte[] value, int timeoutMs,
                           Caller caller, Reply<byte[]> reply) {
        Job job = installedJob(jobNumber, rank, caller, reply);
        if (job == null) {
            return;
        }
        if (rootNumber < -1 || rootNumber >= job.workers()) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "root " + rootNumber + " outside 0.."
                    + (job.workers() - 1)));
            return;
        }
        int root = (int) rootNumber;
        if (job.aborted()) {
            reply.error(new ControlException(Status.ABORTED, abortDescription(job) + "; call #" + sequence
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
        Job.Meeting meeting = job.meetings.computeIfAbsent(sequence, s -> new Job.Meeting(root, job.workers()));
        String kind = root < 0 ? "barrier" : "broadcast from root " + root;
        if (meeting.root != root) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "rank " + rank + " calls a " + kind + " as call #"
                    + sequence + " of job " + jobNumber + ", but other ranks called "
                    + (meeting.root < 0 ? "a barrier" : "a broadcast from root " + meeting.root)
                    + "; every rank must make the same sequence of barrier and broadcast calls"));
            return;
        }
        if (meeting.rendezvous.contains(rank)) {
            reply.error(new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " is already waiting in call #"
                    + sequence + " of job " + jobNumber));
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
        if (complete) {
            job.meetings.remove(sequence);
            meeting.rendezvous.release();
        }
    }

    private synchronized void expireMeeting(Job job, long sequence, int rank, String kind) {
        Job.Meeting meeting = job.meetings.get(sequence);
        if (meeting == null) {
            return;
        }
        meeting.rendezvous.expire(rank, missing -> new ControlException(Status.DEADLINE_EXCEEDED, "job '" + job.name
                + "': rank " + rank + " waited in " + kind + " (call #" + sequence + ") but ranks " + missing
                + " are not there (never came, or gave up waiting); they may have died or be making different calls"));
        if (meeting.rendezvous.empty()) {
            job.meetings.remove(sequence);
        }
    }

    /**
     * A rank leaves, which ends its watch; once every rank has left, the job is removed from the
     * switch; until then the other ranks' watches are told who left after how many all-reduces, so
     * that one waiting for the leaver fails at once. Leaving an aborted job only ends the rank's watch.
     */
    synchronized void leave(int jobNumber, long jobId, int rank, long operations, Caller caller, Reply<Void> reply) {
        Job job = knownJob(jobNumber, jobId, rank, caller, reply::error);
        if (job == null) {
            return;
        }
        if (job.left.contains(rank)) {
            reply.error(new ControlException(Status.FAILED_PRECONDITION, "rank " + rank + " has already left job '"
                    + job.name + "'"));
            return;
        }
        job.left.add(rank);
        ScheduledFuture<?> deadline = job.watchDeadlines.remove(rank);
        if (deadline != null) {
            deadline.cancel(false);
        }
        Watcher watcher = job.watches.remove(rank);
        if (watcher != null) {
            watcher.end();
        }
        if (job.aborted()) {
            forgetIfDone(job);
            reply.ok(null);
            return;
        }
        ControlException gone = new ControlException(Status.ABORTED, "rank " + rank + " left job '" + job.name
                + "' while this call was waiting");
        job.meetings.values().forEach(m -> m.rendezvous.fail(gone));
        job.meetings.clear();
        if (job.left.size() == job.workers()) {
            dataplane.removeJob(jobNumber);
            byNumber[jobNumber] = null;
            byName.remove(job.name, job);
            LOG.info("job '{}' (job number {}) ended: every rank left", job.name, jobNumber);
        } else {
            JobEvent event = JobEvent.newBuilder().setKind(JobEvent.Kind.RANK_LEFT).setJobName(job.name)
                    .setJobNumber(job.number).setLeftRank(rank).setLeftOperations(operations).build();
            job.watches.values().forEach(w -> w.event(event));
        }
        reply.ok(null);
    }

    private <T> Job installedJob(int jobNumber, int rank, Caller caller, Reply<T> reply) {
        Job job = knownJob(jobNumber, 0, rank, caller, reply::error);
        if (job != null && job.left.contains(rank)) {
            reply.error(new ControlException(Status.FAILED_PRECONDITION, "rank " + rank + " has already left job '"
                    + job.name + "'"));
            return null;
        }
        return job;
    }

    /**
     * The job with this number (installed, or aborted and not yet forgotten) and id (0: any), with
     * rank in range; null after sending the error.
     */
    private Job knownJob(int jobNumber, long jobId, int rank, Caller caller,
                         java.util.function.Consumer<ControlException> error) {
        // uint32 fields arrive as Java ints: values of 2^31 and above are negative.
        Job job = jobNumber >= 0 && jobNumber < byNumber.length ? byNumber[jobNumber] : null;
        if (job == null || (jobId != 0 && job.id != jobId)) {
            error.accept(new ControlException(Status.NOT_FOUND, "no job number " + Integer.toUnsignedString(jobNumber)
                    + (job == null ? "" : " with id " + Long.toUnsignedString(jobId))
                    + " is running; it has ended, or the switch restarted since it was joined"));
            return null;
        }
        if (!caller.mayUse(job.secretDigest)) {
            error.accept(new ControlException(Status.PERMISSION_DENIED, "job number " + jobNumber + " is protected by a"
                    + " job secret and this call presented " + (caller.jobSecretDigest() == null ? "none" : "another one")
                    + "; only the job's own ranks (or the operator) may act on it"));
            return null;
        }
        if (rank < 0 || rank >= job.workers()) {
            error.accept(new ControlException(Status.INVALID_ARGUMENT, "rank " + Integer.toUnsignedString(rank)
                    + " outside 0.." + (job.workers() - 1)));
            return null;
        }
        return job;
    }

    /** The installed jobs, for inspection. */
    synchronized List<JobStatus> jobs() {
        List<JobStatus> jobs = new ArrayList<>();
        for (Job job : byNumber) {
            if (job != null && !job.aborted()) {
                jobs.add(JobViews.status(job));
            }
        }
        return jobs;
    }

    /** The jobs whose ranks are still joining, by name, for inspection. */
    synchronized List<JobStatus> formingJobs() {
        return byName.values().stream().filter(job -> !job.installed())
                .sorted(Comparator.comparing(job -> job.name)).map(JobViews::status).toList();
    }

    /**
     * One job in detail, with the switch's seen-bitmaps read under this lock (so that the job number
     * cannot be reused meanwhile). Finds installed or aborted jobs by number, installed or forming
     * ones by name.
     *
     * @throws ControlException NOT_FOUND when there is no such job
     */
    synchronized JobDetailResponse detail(JobDetailRequest request) {
        Job job = switch (request.getJobCase()) {
            case JOB_NUMBER -> request.getJobNumber() >= 0 && request.getJobNumber() < byNumber.length
                    ? byNumber[request.getJobNumber()] : null;
            case JOB_NAME -> byName.get(request.getJobName());
            case JOB_NOT_SET -> throw new ControlException(Status.INVALID_ARGUMENT, "name the job by number or name");
        };
        if (job == null) {
            throw new ControlException(Status.NOT_FOUND, "no job " + (request.hasJobName()
                    ? "named '" + request.getJobName() + "'" : "number " + Integer.toUnsignedString(request.getJobNumber()))
                    + " on this switch; `switchml ctl jobs` lists the jobs there are");
        }
        boolean onSwitch = job.installed() && !job.aborted();
        return JobViews.detail(job, onSwitch ? dataplane.slotBitmaps(job.number) : Optional.empty(),
                request.getMaxSlotCopies());
    }

    static String describe(JobParameters p) {
        return "workers=" + p.getNumWorkers() + ", elementsPerPacket=" + p.getElementsPerPacket()
                + ", slotsPerThread=" + p.getSlotsPerThread() + ", threads=" + p.getThreads()
                + ", oneRoundElements=" + p.getOneRoundElements();
    }
}
