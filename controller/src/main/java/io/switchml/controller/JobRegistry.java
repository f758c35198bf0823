package io.switchml.controller;

import io.grpc.Status;
import io.switchml.control.JobNames;
import io.switchml.controller.proto.DiagnoseResponse;
import io.switchml.controller.proto.JobDetailRequest;
import io.switchml.controller.proto.JobDetailResponse;
import io.switchml.controller.proto.JobEvent;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.WorkerTransport;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.MissingRanks;
import io.switchml.protocol.ProtocolConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The controller's state: jobs by name while they form, by job number once installed in the switch.
 * Every method runs on the {@link ControllerAgent}, the one thread that owns the tables; waits never block
 * it, they park a reply until a rendezvous
 * completes or its timer fires. How a job forms is {@link JobFormation}'s, whether its ranks are
 * alive (the watches, aborting a job whose rank died) {@link JobLiveness}', its barriers and
 * broadcasts {@link JobMeetings}'; all work on these tables on the agent. What stays here: the
 * tables, the operator's job secrets, leaving, and inspection. An aborted job keeps its number, so
 * that its survivors' late calls (leave, barrier) reach it and not a new job, until none of its ranks
 * holds a watch any more.
 */
final class JobRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(JobRegistry.class);

    /** Where a parked request's answer goes. */
    interface Reply<T> {
        void ok(T value);

        void error(ControlException error);
    }

    /** A rank's open watch: where its job's events go. Called on the agent. */
    interface Watcher {
        void event(JobEvent event);

        /** Ends the watch normally (the rank left, or it was told the job is over). */
        void end();

        /** Refuses the watch. */
        void error(ControlException error);
    }

    /** The most job names with an issued secret at once; issuing is the operator's, so this only bounds mistakes. */
    /** Calls for jobs a tenant is no member of, sustained and at once, before it is refused. */
    static final int FOREIGN_CALLS_PER_SECOND = 10;
    static final int FOREIGN_CALLS_BURST = 100;
    static final int MAX_ISSUED_SECRETS = 65_536;

    private final AggregationSwitch dataplane;
    private final ScheduledExecutorService timer;
    private final ControllerSecurity security;
    private final Map<String, Job> byName = new HashMap<>();
    /** Digests of the secrets the operator issued, by job name. */
    private final Map<String, byte[]> issuedSecrets = new HashMap<>();
    private final Job[] byNumber = new Job[ProtocolConstants.MAX_JOBS];
    private final JobEndings endings = new JobEndings();
    /** The one thread that owns these tables and runs every change to them. */
    private final ControllerAgent agent = new ControllerAgent();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final JobLiveness liveness;
    private final JobLog log;
    /** Where the issued secrets outlive a restart; null: memory only. */
    private final IssuedSecretsFile secretsFile;
    /**
     * Calls for a job number the caller is no member of (a wrong or missing job id), per tenant: a real rank makes
     * a few (the switch restarted), a guesser many.
     */
    private final PeerRateLimiter foreignCallLimiter = new PeerRateLimiter(FOREIGN_CALLS_PER_SECOND,
            FOREIGN_CALLS_BURST, System::nanoTime);
    private final java.util.concurrent.atomic.LongAdder foreignCalls = new java.util.concurrent.atomic.LongAdder();
    private final JobFormation formation;
    private final JobMeetings meetings;
    /** A leaf's link to its spine (docs/ARCHITECTURE.md section 9); null for a switch that is no leaf. */
    private final SpineLink spine;

    JobRegistry(AggregationSwitch dataplane, ScheduledExecutorService timer) {
        this(dataplane, timer, new ControllerSecurity());
    }

    JobRegistry(AggregationSwitch dataplane, ScheduledExecutorService timer, ControllerSecurity security) {
        this(dataplane, timer, security, null);
    }

    /** @param leaf this switch's place in a two-level hierarchy, or null for a switch that is no leaf */
    JobRegistry(AggregationSwitch dataplane, ScheduledExecutorService timer, ControllerSecurity security, LeafRole leaf) {
        this(dataplane, timer, security, leaf, JobLog.flushedBy(timer));
    }

    /** @param log where the lines about jobs that callers cause go, limited per tenant */
    JobRegistry(AggregationSwitch dataplane, ScheduledExecutorService timer, ControllerSecurity security, LeafRole leaf,
                JobLog log) {
        this.dataplane = dataplane;
        this.log = log;
        this.timer = timer;
        this.security = security;
        this.liveness = new JobLiveness(agent, dataplane, byName, byNumber, endings, log);
        this.spine = leaf == null ? null : new SpineLink(leaf, dataplane, agent, liveness);
        this.formation = new JobFormation(agent, dataplane, timer, security, byName, byNumber, issuedSecrets, log,
                liveness::watchMissing, spine);
        this.meetings = new JobMeetings(agent, timer, security, spine);
        this.secretsFile = security.issuedSecretsFile() == null ? null : new IssuedSecretsFile(security.issuedSecretsFile());
        if (secretsFile != null) {
            issuedSecrets.putAll(secretsFile.load());
        }
    }

    /**
     * Issues a fresh secret for a job name (the operator's call): from now on a join of that name
     * must present it. Returns the secret; only its digest is kept.
     *
     * @throws ControlException PERMISSION_DENIED unless the caller is the operator (so a switch without an
     *                          operator token issues none: a stranger could otherwise lock a job's future
     *                          ranks out of its name), INVALID_ARGUMENT for a bad name, FAILED_PRECONDITION
     *                          when a job of that name is forming or running (its ranks hold the old secret),
     *                          RESOURCE_EXHAUSTED beyond {@link #MAX_ISSUED_SECRETS} names
     */
    String issueSecret(String name, Caller caller) {
        return agent.call(() -> {
            if (!caller.operator()) {
                throw new ControlException(Status.PERMISSION_DENIED, "only the operator issues job secrets, and this switch"
                        + " has no operator token: start it with --operator-token-file FILE and run `switchml ctl"
                        + " --token-file FILE secret " + name + "`; or give every rank of the job the same secret of"
                        + " its own (switchml.jobSecretFile)");
            }
            String badName = JobNames.problem(name);
            if (badName != null) {
                throw new ControlException(Status.INVALID_ARGUMENT, "job name " + badName);
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
            if (secretsFile != null) {
                secretsFile.save(issuedSecrets);
            }
            LOG.info("issued a secret for job '{}'", name);
            return secret;
        });
    }

    /**
     * Parks the join until every rank has joined; then installs the job and answers it. Returns what
     * to run if the caller goes away while it waits (it takes the rank's arrival back). See {@link JobFormation}.
     */
    Runnable join(JoinRequest request, Caller caller, Reply<Job> reply) {
        return agent.call(() -> formation.join(request, caller, reply));
    }

    /** The number of ranks waiting for their jobs to form, for inspection and tests. */
    int pendingJoins() {
        return agent.call(() -> formation.pendingJoins());
    }

    /**
     * Registers rank's watch and sends it WATCHING; on a job that was aborted, sends RANKS_FAILED
     * and ends it. Returns what to run when the watch ends without the server ending it (the
     * client cancelled it, or its connection broke). See {@link JobLiveness}.
     */
    Runnable watch(int jobNumber, long jobId, int rank, Caller caller, Watcher watcher) {
        return agent.call(() -> {
            Job job = knownJob(jobNumber, jobId, rank, caller, watcher::error);
            return job == null ? () -> { } : liveness.watch(job, rank, watcher);
        });
    }

    /** The service is shutting down; the calls it cancels do not abort jobs. */
    void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        agent.run(() -> liveness.close());
        if (spine != null) {
            spine.close(); // not on the agent: its calls in flight report their end through it
        }
        agent.close();
    }

    /**
     * What the controller and the switch know about a job that seems stuck. At a leaf whose own ranks are
     * all in, the missing ones are at other leaves: the spine's diagnosis names those leaves, and their
     * ranks are reported (asked off the agent, within {@link SpineLink#DIAGNOSIS_DEADLINE}).
     */
    DiagnoseResponse diagnose(int jobNumber, long jobId, Caller caller) {
        LocalDiagnosis here = agent.call(() -> {
            Job job = jobNumber >= 0 && jobNumber < byNumber.length ? byNumber[jobNumber] : null;
            DiagnoseResponse local = diagnoseHere(job, jobNumber, jobId, caller);
            return new LocalDiagnosis(job, local, local.getInstalled() && local.getMissingRanksCount() == 0 ? job.spine : null);
        });
        if (here.membership() == null || spine == null) {
            return here.response();
        }
        SpineLink.Leaves lagging = spine.lagging(here.job(), here.membership());
        return lagging.ranks().isEmpty() ? here.response()
                : here.response().toBuilder().addAllMissingRanks(lagging.ranks()).setWaitingAtSpine(lagging.described()).build();
    }

    /** What this switch knows of a job, and, at a leaf whose own ranks are all in, its membership at the spine. */
    private record LocalDiagnosis(Job job, DiagnoseResponse response, SpineMembership membership) {
    }

    private DiagnoseResponse diagnoseHere(Job job, int jobNumber, long jobId, Caller caller) {
        if (job == null || (jobId != 0 && job.id != jobId) || !isMember(job, jobId, caller)
                || !caller.mayUse(job.secretDigest)) {
            return DiagnoseResponse.newBuilder().setKnown(false).build();
        }
        DiagnoseResponse.Builder b = DiagnoseResponse.newBuilder().setKnown(true).setJobName(job.name)
                .addAllLeftRanks(job.left).addAllFailedRanks(job.failed);
        if (job.aborted()) {
            return b.setAbortedReason(job.abortReason).build();
        }
        MissingRanks missing = dataplane.missingRanks(jobNumber).orElse(null);
        if (missing != null) {
            b.setInstalled(true).addAllMissingRanks(JobViews.globalRanks(job, missing.ranks()))
                    .setIncompleteSlots(missing.incompleteSlots());
        }
        return b.build();
    }

    /**
     * Parks a barrier (root = -1) or broadcast until every rank has called it with the same sequence
     * number; answers the root's value (empty for a barrier). See {@link JobMeetings}.
     */
    void meet(int jobNumber, long jobId, int rank, long sequence, long rootNumber, byte[] value,
                           int timeoutMs, Caller caller, Reply<byte[]> reply) {
        agent.run(() -> {
            Job job = installedJob(jobNumber, jobId, rank, caller, reply);
            if (job != null) {
                meetings.meet(job, rank, sequence, rootNumber, value, timeoutMs, reply);
            }
        });
    }

    /**
     * A rank leaves, which ends its watch; once every rank has left, the job is removed from the
     * switch; until then the other ranks' watches are told who left after how many all-reduces, so
     * that one waiting for the leaver fails at once. Leaving an aborted job only ends the rank's watch.
     */
    void leave(int jobNumber, long jobId, int rank, long operations, Caller caller, Reply<Void> reply) {
        agent.run(() -> {
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
            liveness.rankLeft(job, rank);
            if (job.aborted()) {
                liveness.forgetIfDone(job);
                reply.ok(null);
                return;
            }
            ControlException gone = new ControlException(Status.ABORTED, "rank " + rank + " left job '" + job.name
                    + "' while this call was waiting");
            JobMeetings.failAll(job, gone);
            if (job.left.size() == job.ranks()) {
                if (job.spine != null) {
                    spine.leave(job, rank, operations);
                }
                dataplane.removeJob(jobNumber, log.dataplaneLines(job.tenant));
                byNumber[jobNumber] = null;
                byName.remove(job.name, job);
                endings.ended(JobEndings.Reason.LEFT);
                log.info(LOG, job.tenant, "job '" + job.name + "' (job number " + jobNumber + ") ended: every rank left");
            } else {
                JobEvent event = JobLiveness.rankLeftEvent(job, rank, operations);
                job.watches.values().forEach(w -> w.event(event));
                if (job.spine != null) {
                    spine.relayLeft(job, rank, operations); // the workers at the other leaves wait on it too
                }
            }
            reply.ok(null);
        });
    }

    /** The controller's TCP port, once it listens: a join may not name it as a worker's UDP port on this host. */
    void controllerPort(int port) {
        formation.controllerPort(port);
    }

    /**
     * The operator ends a running job by its number alone (a Leave without a job id): its token, or the switch's
     * own user or root calling from its host ({@link Caller#mayEndAnyJob}). Anyone else hears NOT_FOUND, as for
     * any job they are no member of.
     */
    void endJob(int jobNumber, Caller caller, Reply<Void> reply) {
        agent.run(() -> {
            Job job = jobNumber >= 0 && jobNumber < byNumber.length ? byNumber[jobNumber] : null;
            if (!caller.mayEndAnyJob() || job == null || !liveness.endByOperator(job, caller.operator()
                    ? "operator token" : caller.tenant())) {
                reply.error(new ControlException(Status.NOT_FOUND, "no job number " + Integer.toUnsignedString(jobNumber)
                        + " is running that this caller may end (the operator ends jobs: its token, or the switch's own"
                        + " user or root on the switch's host)"));
                return;
            }
            reply.ok(null);
        });
    }

    /**
     * A leaf relays that worker {@code relayedRank} of the whole job left after {@code operations} all-reduces
     * (docs/ARCHITECTURE.md section 9): the other ranks' watches hear it; the leaf stays in the job.
     */
    void relayLeft(int jobNumber, long jobId, int rank, int relayedRank, long operations, Caller caller,
                                Reply<Void> reply) {
        agent.run(() -> {
            Job job = knownJob(jobNumber, jobId, rank, caller, reply::error);
            if (job == null) {
                return;
            }
            if (!job.aborted()) {
                JobEvent event = JobLiveness.rankLeftEvent(job, relayedRank, operations).toBuilder().setRelayed(true).build();
                job.watches.forEach((r, w) -> {
                    if (r != rank) {
                        w.event(event);
                    }
                });
            }
            reply.ok(null);
        });
    }

    /** A rank's transport report: kept (the latest per rank) for {@link #detail}. */
    void reportTransport(int jobNumber, long jobId, int rank,
                                      io.switchml.controller.proto.WorkerTransport transport, Caller caller,
                                      Reply<Void> reply) {
        agent.run(() -> {
            Job job = installedJob(jobNumber, jobId, rank, caller, reply);
            if (job == null) {
                return;
            }
            job.transport.put(rank, new TransportReports.Received(transport.toBuilder().setRank(rank)
                    .setReportedMsAgo(0).build(), System.nanoTime()));
            if (!job.ipcSealed && job.transport.size() >= job.ranks() && !job.aborted()) {
                // Every rank has mapped the board and rings or chosen UDP (a worker reports after that choice): their
                // names go, so that nobody can open the files to shrink them under them (docs/security.md, round 5).
                job.ipcSealed = true;
                dataplane.ipcSeal(jobNumber);
            }
            reply.ok(null);
        });
    }

    private <T> Job installedJob(int jobNumber, long jobId, int rank, Caller caller, Reply<T> reply) {
        Job job = knownJob(jobNumber, jobId, rank, caller, reply::error);
        if (job != null && job.left.contains(rank)) {
            reply.error(new ControlException(Status.FAILED_PRECONDITION, "rank " + rank + " has already left job '"
                    + job.name + "'"));
            return null;
        }
        return job;
    }

    /**
     * The job with this number (installed, or aborted and not yet forgotten) and id, with rank in range;
     * null after sending the error. The id is the job's membership credential (see {@link #isMember}).
     */
    private Job knownJob(int jobNumber, long jobId, int rank, Caller caller,
                         java.util.function.Consumer<ControlException> error) {
        // uint32 fields arrive as Java ints: values of 2^31 and above are negative.
        Job job = jobNumber >= 0 && jobNumber < byNumber.length ? byNumber[jobNumber] : null;
        if (job == null || !isMember(job, jobId, caller)) {
            // One answer whether the number is free or another's: a stranger learns nothing of which numbers are live.
            foreignCalls.increment();
            String tenant = caller.operator() ? null : caller.tenant();
            if (!foreignCallLimiter.tryAcquire(tenant)) {
                error.accept(new ControlException(Status.RESOURCE_EXHAUSTED, "too many calls for jobs this caller is no"
                        + " member of from " + (tenant == null ? "this peer" : "tenant " + tenant) + " (at most "
                        + FOREIGN_CALLS_PER_SECOND + " a second); a job's ranks act on it with the job id their joins"
                        + " returned"));
                log.warn(LOG, tenant, "tenant " + tenant + " makes many calls for jobs it is no member of (guessing job"
                        + " ids?); refused beyond " + FOREIGN_CALLS_PER_SECOND + " a second");
                return null;
            }
            error.accept(new ControlException(Status.NOT_FOUND, "no job number " + Integer.toUnsignedString(jobNumber)
                    + " is running, or none this call may act on: it has ended, the switch restarted since it was"
                    + " joined, or the call lacks the job id its ranks' joins returned (only they, and the operator"
                    + " with its token, may act on a job)"));
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
        if (!job.serves(rank)) {
            error.accept(new ControlException(Status.INVALID_ARGUMENT, "rank " + rank + " of job '" + job.name
                    + "' is not one of this leaf's ranks " + job.firstRank + ".." + (job.firstRank + job.ranks() - 1)));
            return null;
        }
        job.lastHeard.heard(System.nanoTime()); // a member call: the job is alive
        return job;
    }

    /**
     * Whether the caller may act on the job as one of its ranks: it presents the job's id, which only the
     * job's joins returned (a random 63-bit number, never shown to others), or it is the operator. This
     * holds on a switch without credentials too, so a stranger cannot make a rank leave, meet or report.
     */
    private static boolean isMember(Job job, long jobId, Caller caller) {
        return caller.operator() || jobId == job.id;
    }

    /**
     * Ends every running job of which no rank made a call and no packet reached the switch for
     * {@code idleNanos}: dead members whose watch was off (or whose switch never heard them go) would
     * otherwise hold their slots and job number for good. A live worker reports its transport every
     * second, so only jobs without a live member are reclaimed.
     */
    void reclaimIdle(long now, long idleNanos) {
        agent.run(() -> {
            for (Job job : byNumber) {
                if (job == null || !job.installed() || job.aborted()) {
                    continue;
                }
                if (job.lastHeard.silentFor(dataplane.activity(job.number), now, idleNanos)) {
                    liveness.reclaim(job, "no rank made a call and no packet reached the switch for "
                            + TimeUnit.NANOSECONDS.toSeconds(idleNanos) + " s (its ranks are gone); the switch reclaimed it");
                }
            }
        });
    }

    /** Jobs ended since the switch started, by why (for the metrics). */
    long jobsEnded(JobEndings.Reason reason) {
        return endings.count(reason);
    }

    /** One rank's latest transport report in a running job, for the metrics. */
    record RankTransport(int jobNumber, String jobName, WorkerTransport transport) {
    }

    /** Every running job's ranks' latest transport reports. */
    List<RankTransport> rankTransports() {
        return agent.call(() -> {
            List<RankTransport> all = new ArrayList<>();
            for (Job job : byNumber) {
                if (job != null && job.installed() && !job.aborted()) {
                    job.transport.values().forEach(r -> all.add(new RankTransport(job.number, job.name, r.transport())));
                }
            }
            return all;
        });
    }

    /** The installed jobs, for inspection. */
    List<JobStatus> jobs() {
        return agent.call(() -> {
            List<JobStatus> jobs = new ArrayList<>();
            for (Job job : byNumber) {
                if (job != null && !job.aborted()) {
                    jobs.add(JobViews.status(job));
                }
            }
            return jobs;
        });
    }

    /**
     * What each tenant's running jobs hold (docs/security.md, "Fair shares"), for the metrics: by tenant, its
     * jobs, slots and register bytes. The operator's jobs are no tenant's and not listed.
     */
    java.util.SortedMap<String, long[]> tenantHoldings() {
        return agent.call(() -> {
            java.util.SortedMap<String, long[]> held = new java.util.TreeMap<>();
            for (Job job : byNumber) {
                if (job != null && job.tenant != null && job.installed() && !job.aborted()) {
                    long[] h = held.computeIfAbsent(job.tenant, t -> new long[3]);
                    h[0]++;
                    dataplane.job(job.number).ifPresent(spec -> {
                        h[1] += spec.slots();
                        h[2] += spec.memoryBytes();
                    });
                }
            }
            return held;
        });
    }

    /** The jobs whose ranks are still joining, by name, for inspection. */
    /** Calls for jobs their caller is no member of (wrong or missing job ids), since the start. */
    long foreignJobCalls() {
        return foreignCalls.sum();
    }

    /** Lines about jobs that callers caused and that were counted instead of written ({@link JobLog}). */
    long logLinesNotWritten() {
        return log.suppressed();
    }

    List<JobStatus> formingJobs() {
        return agent.call(() -> byName.values().stream().filter(job -> !job.installed())
                    .sorted(Comparator.comparing(job -> job.name)).map(JobViews::status).toList());
    }

    /**
     * One job in detail, with the switch's seen-bitmaps read on the agent (so that the job number
     * cannot be reused meanwhile). Finds installed or aborted jobs by number, installed or forming
     * ones by name.
     *
     * @throws ControlException NOT_FOUND when there is no such job
     */
    JobDetailResponse detail(JobDetailRequest request, Caller caller) {
        return agent.call(() -> {
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
            // The job id is its members' credential: shown to the operator only, never on a switch without a token.
            return JobViews.detail(job, onSwitch ? dataplane.slotBitmaps(job.number) : Optional.empty(),
                    request.getMaxSlotCopies(), caller.operator());
        });
    }

    static String describe(JobParameters p) {
        return "workers=" + p.getNumWorkers() + ", elementsPerPacket=" + p.getElementsPerPacket()
                + ", slotsPerThread=" + p.getSlotsPerThread() + ", threads=" + p.getThreads()
                + ", oneRoundElements=" + p.getOneRoundElements() + ", skipZeroBlocks=" + p.getSkipZeroBlocks()
                + (p.getLaneBits() == 16 ? ", laneBits=16" : "") + (p.getAuthenticatePackets() ? ", authenticatePackets" : "");
    }
}
