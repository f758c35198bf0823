package io.switchml.controller;

import io.grpc.Status;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.InsufficientSlotsException;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.SlotPool;
import io.switchml.dataplane.WorkerEndpoint;
import io.switchml.protocol.LeafRanks;
import io.switchml.protocol.PacketKey;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * How a job forms (docs/ARCHITECTURE.md, section 4): each rank's join is checked (its secret, the
 * caps on waiting joins, the job's parameters, its endpoints) and parked until every rank has come;
 * the last one installs the job in the switch, with the slots admission control grants, and all
 * are answered together. A rank whose wait runs out is told which ranks are missing. Works on the
 * {@link JobRegistry}'s tables, on its agent; the expiry timers run there too.
 */
final class JobFormation {
    private static final Logger LOG = LoggerFactory.getLogger(JobFormation.class);
    /** Job ids are the members' credential (see {@code JobRegistry.isMember}). */
    private static final SecureRandom JOB_IDS = new SecureRandom();
    private static final SecureRandom SALTS = new SecureRandom();

    /** Where an installed job's promised watches are checked once their grace time has passed. */
    interface WatchDeadline {
        void missed(Job job, int rank, int graceMs);
    }

    private final ControllerAgent agent;
    private final AggregationSwitch dataplane;
    private final ScheduledExecutorService timer;
    private final ControllerSecurity security;
    private final Map<String, Job> byName;
    private final Job[] byNumber;
    private final Map<String, byte[]> issuedSecrets;
    private final JobLog log;
    private final WatchDeadline watchDeadline;
    /** A leaf's link to its spine (docs/ARCHITECTURE.md section 9); null for a switch that is no leaf. */
    private final SpineLink spine;

    JobFormation(ControllerAgent agent, AggregationSwitch dataplane, ScheduledExecutorService timer, ControllerSecurity security,
                 Map<String, Job> byName, Job[] byNumber, Map<String, byte[]> issuedSecrets, JobLog log, WatchDeadline watchDeadline,
                 SpineLink spine) {
        this.agent = agent;
        this.dataplane = dataplane;
        this.timer = timer;
        this.security = security;
        this.byName = byName;
        this.byNumber = byNumber;
        this.issuedSecrets = issuedSecrets;
        this.log = log;
        this.watchDeadline = watchDeadline;
        this.spine = spine;
    }

    /**
     * Parks the join until every rank has joined; then installs the job and answers it. Returns what
     * to run if the caller goes away while it waits (it takes the rank's arrival back).
     */
    Runnable join(JoinRequest request, Caller caller, JobRegistry.Reply<Job> reply) {
        String problem = JoinValidator.problem(request);
        if (problem == null) {
            problem = ownSource(request);
        }
        if (problem != null) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "invalid join request: " + problem));
            return () -> { };
        }
        String notServed = spine == null ? null : notServedHere(request);
        if (notServed != null) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, notServed));
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
        if (request.getParameters().getAuthenticatePackets()) {
            String refused = packetAuthenticationRefused(required != null ? required : caller.jobSecretDigest());
            if (refused != null) {
                reply.error(new ControlException(Status.FAILED_PRECONDITION, "rank " + rank + " cannot join job '" + name
                        + "' with authenticated packets: " + refused));
                return () -> { };
            }
        }
        if (job != null && job.installed()) {
            reply.error(new ControlException(Status.FAILED_PRECONDITION, "job '" + name + "' is already running as job number "
                    + job.number + " with all " + job.workers() + " ranks; a rank cannot join it twice."
                    + " Wait for the job to end (every rank closes its context) or use another job name"));
            return () -> { };
        }
        String full = pendingJoinsFull(caller.operator() ? null : caller.tenant());
        if (full != null) {
            reply.error(new ControlException(Status.RESOURCE_EXHAUSTED, "rank " + rank + " cannot join job '" + name
                    + "': " + full));
            return () -> { };
        }
        if (job == null) {
            String tableFull = jobTableShareFull(caller.operator() ? null : caller.tenant());
            if (tableFull != null) {
                reply.error(new ControlException(Status.RESOURCE_EXHAUSTED, "rank " + rank + " cannot join job '" + name
                        + "': " + tableFull));
                return () -> { };
            }
            byte[] secret = required != null ? required : caller.jobSecretDigest();
            if (spine == null) {
                job = new Job(name, request.getParameters(), secret);
            } else {
                LeafRole role = spine.role();
                int n = request.getParameters().getNumWorkers();
                job = new Job(name, request.getParameters(), secret, LeafRanks.firstRank(role.leafIndex(), role.leaves(), n),
                        LeafRanks.rankCount(role.leafIndex(), role.leaves(), n));
            }
            job.tenant = caller.operator() ? null : caller.tenant();
            byName.put(name, job);
        } else if (!job.parameters.equals(request.getParameters())) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "rank " + rank + " joins job '" + name
                    + "' with parameters {" + JobRegistry.describe(request.getParameters()) + "} but the ranks already waiting use {"
                    + JobRegistry.describe(job.parameters) + "}; every worker of a job must be configured alike"));
            return () -> { };
        }
        if (job.joining.contains(rank)) {
            // Two processes claim one seat and nothing tells the rightful one: the job cannot form as meant, so
            // every waiting rank learns it now instead of when its join times out.
            ControlException claimedTwice = new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " of job '"
                    + name + "' was claimed twice (from " + describePeer(job.joinPeers.get(rank)) + " and from "
                    + describePeer(caller.peer()) + "); the forming job is cancelled. Each rank joins once (is a rank"
                    + " number given to two workers?); on a shared switch, protect the job with a job secret"
                    + " (switchml.jobSecretFile) so that only its own ranks can take its seats");
            refuse(job, claimedTwice);
            reply.error(claimedTwice);
            return () -> { };
        }
        int[] ports = request.getPortsList().stream().mapToInt(Integer::intValue).toArray();
        WorkerEndpoint endpoint = request.getLeaf() ? WorkerEndpoint.leafSwitch(JoinValidator.ipv4(request.getAddress()), ports)
                : new WorkerEndpoint(JoinValidator.ipv4(request.getAddress()), ports);
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
        job.joinTenants.put(rank, caller.operator() ? null : caller.tenant());
        int waitMs = Math.min(request.getTimeoutMs(), security.maxJoinWaitMs());
        job.joinTimeoutMs = Math.max(job.joinTimeoutMs, waitMs);
        if (request.getWatch()) {
            job.watchGraceMs.put(rank, request.getTimeoutMs());
        } else {
            job.watchGraceMs.remove(rank);
        }
        boolean complete = job.joining.arrive(rank, endpoint, waiter,
                timer.schedule(() -> expireJoin(joining, rank), waitMs, TimeUnit.MILLISECONDS));
        if (complete) {
            if (spine == null) {
                install(job, null);
            } else if (!job.joiningSpine) {
                joinSpine(job);
            }
        }
        return () -> withdrawJoin(joining, rank, waiter);
    }

    /** Why this leaf does not serve the joining rank (docs/ARCHITECTURE.md section 9), or null when it does. */
    private String notServedHere(JoinRequest request) {
        LeafRole role = spine.role();
        int n = request.getParameters().getNumWorkers();
        if (n < role.leaves()) {
            return "job '" + request.getJobName() + "' has " + n + " workers, fewer than the " + role.leaves()
                    + " leaves of this hierarchy; every leaf needs at least one rank";
        }
        int rank = request.getRank();
        int leaf = LeafRanks.leafOf(rank, role.leaves(), n);
        if (leaf == role.leafIndex()) {
            return null;
        }
        return "rank " + rank + " of job '" + request.getJobName() + "' (" + n + " workers over " + role.leaves()
                + " leaves) is served by leaf " + leaf + " (ranks " + LeafRanks.describe(leaf, role.leaves(), n)
                + "), but this switch is leaf " + role.leafIndex() + " (ranks "
                + LeafRanks.describe(role.leafIndex(), role.leaves(), n) + "); point that worker's switchml.controller at leaf "
                + leaf;
    }

    /**
     * A leaf's ranks of {@code job} are all here: it joins the spine's job with the window its own
     * pool grants, and installs the job once the spine has answered (with the spine's window).
     */
    private void joinSpine(Job job) {
        JobParameters p = job.parameters;
        try {
            job.grant = SlotAdmission.grant(job.name, p.getThreads(), p.getSlotsPerThread(), slotBytes(p), dataplane.slotPool(),
                    tenantOf(job));
        } catch (ControlException e) {
            refuse(job, e);
            return;
        }
        job.joiningSpine = true;
        log.info(LOG, job.tenant, "job '" + job.name + "': the ranks of " + spine.describe() + " are all here; joining the spine");
        spine.join(job, job.grant.slotsPerThread(), new SpineLink.Joined() {
            @Override
            public void joined(SpineMembership membership) {
                job.joiningSpine = false;
                job.spine = membership;
                if (byName.get(job.name) != job || job.joining.values().size() < job.ranks()) {
                    refuse(job, new ControlException(Status.ABORTED, "job '" + job.name + "': ranks "
                            + job.joining.missing() + " of " + spine.describe() + " gave up waiting while it joined the"
                            + " spine; join again"));
                    return;
                }
                install(job, membership);
            }

            @Override
            public void failed(ControlException error) {
                job.joiningSpine = false;
                if (byName.get(job.name) == job) {
                    refuse(job, error);
                }
            }
        });
    }

    /**
     * Why one more waiting rank from {@code peer} would exceed the caps on waiting joins, or null.
     * Counted afresh each time (at most {@link ControllerSecurity#maxPendingJoins} ranks), so that no
     * path that ends a wait can leave a count wrong.
     */
    private String pendingJoinsFull(String tenant) {
        int total = 0;
        int fromTenant = 0;
        for (Job forming : byName.values()) {
            if (forming.installed()) {
                continue;
            }
            for (Integer r : forming.joining.values().keySet()) {
                total++;
                if (tenant != null && tenant.equals(forming.joinTenants.get(r))) {
                    fromTenant++;
                }
            }
        }
        if (total >= security.maxPendingJoins()) {
            return "the controller already holds " + total + " ranks waiting for their jobs to form, its limit; retry once"
                    + " jobs have formed or their joins timed out";
        }
        int perTenant = Caller.UNKNOWN_LOCAL.equals(tenant)
                ? Math.max(1, security.maxPendingJoinsPerPeer() / UNKNOWN_LOCAL_PARTS) : security.maxPendingJoinsPerPeer();
        if (tenant != null && fromTenant >= perTenant) {
            return "tenant " + tenant + " already has " + fromTenant + " ranks waiting for their jobs to form, the limit"
                    + " per tenant; retry once those jobs have formed or their joins timed out";
        }
        return null;
    }

    /** The number of ranks waiting for their jobs to form, for inspection and tests. */
    int pendingJoins() {
        int total = 0;
        for (Job forming : byName.values()) {
            if (!forming.installed()) {
                total += forming.joining.values().size();
            }
        }
        return total;
    }

    /** A joining rank's caller went away (its process died) while it waited: it no longer counts. */
    private void withdrawJoin(Job job, int rank, Rendezvous.Waiter<WorkerEndpoint> waiter) {
        agent.callback(() -> withdrawJoinOnAgent(job, rank, waiter));
    }

    private void withdrawJoinOnAgent(Job job, int rank, Rendezvous.Waiter<WorkerEndpoint> waiter) {
        if (job.installed() || !job.joining.withdraw(rank, waiter)) {
            return;
        }
        job.watchGraceMs.remove(rank);
        log.info(LOG, job.joinTenants.get(rank), "rank " + rank + " of job '" + job.name
                + "' went away while waiting for the other ranks to join");
        if (job.joining.empty()) {
            byName.remove(job.name, job);
        }
    }

    /**
     * What is wrong with a (valid) join whose address and a port are the switch's own UDP source, or null:
     * the switch would send the rank's results to itself, and one spoofed packet would make it answer itself.
     */
    private String ownSource(JoinRequest request) {
        InetAddress address = JoinValidator.ipv4(request.getAddress());
        int tcp = controllerPort;
        for (int port : request.getPortsList()) {
            if (port == tcp && LocalUsers.isLocal(address)) {
                return "address " + request.getAddress() + " with UDP port " + port + " is the switch's own host and its"
                        + " controller's port: the switch would send the rank's results to its own sockets. Give the"
                        + " worker's own address and the ports its threads send from (switchml.localAddress)";
            }
            if (dataplane.isOwnSource(address, port)) {
                return "address " + request.getAddress() + " with UDP port " + port + " is the switch's own (it listens"
                        + " on " + dataplane.bindAddress().getHostAddress() + " UDP ports " + Arrays.toString(dataplane.ports())
                        + "): the switch would send the rank's results to itself. Give the worker's own address and the"
                        + " ports its threads send from (switchml.localAddress)";
            }
        }
        return null;
    }

    /** The controller's TCP port once it listens (0 before): no worker's UDP port on the switch's host. */
    private volatile int controllerPort;

    void controllerPort(int port) {
        this.controllerPort = port;
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

    private void expireJoin(Job job, int rank) {
        agent.callback(() -> expireJoinOnAgent(job, rank));
    }

    private void expireJoinOnAgent(Job job, int rank) {
        job.joining.expire(rank, missing -> new ControlException(Status.DEADLINE_EXCEEDED, "job '" + job.name
                + "': rank " + rank + " waited for the other ranks to join, but " + (job.joiningSpine
                ? "the spine has not formed the job (this leaf's ranks are all here, other leaves' are not); see the other"
                + " leaves' workers" : "ranks " + missing + " are not there (never joined, or gave up waiting)")
                + "; start every worker with the same job name and number of workers (" + job.workers() + ")"));
        if (job.joining.empty() && !job.installed()) {
            byName.remove(job.name, job);
        }
    }

    /** Installs the job; a leaf's ({@code membership} not null) with the spine's window and its uplink. */
    private void install(Job job, SpineMembership membership) {
        String tableFull = jobTableShareFull(job.tenant);
        if (tableFull != null) {
            refuse(job, new ControlException(Status.RESOURCE_EXHAUSTED, "job '" + job.name + "' cannot be installed: "
                    + tableFull));
            return;
        }
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
            // A leaf's window is the spine's, so that slot numbers mean the same at both levels; two rounds
            // always, since quantizing needs the global maximum exponent first.
            grant = membership == null
                    ? SlotAdmission.grant(job.name, p.getThreads(), p.getSlotsPerThread(), slotBytes(p), dataplane.slotPool(),
                    tenantOf(job))
                    : new SlotAdmission.Grant(membership.slotsPerThread,
                            job.grant.reduced() ? job.grant.reason() : membership.admission);
            PayloadSize size = PayloadSize.ofElements(p.getElementsPerPacket());
            byte[] salt = p.getAuthenticatePackets() ? freshSalt() : null;
            JobSpec installed = dataplane.installJob(new JobSpec(number, job.name, size, grant.slotsPerThread(),
                    p.getThreads(), endpoints, true, membership == null ? p.getOneRoundElements() : 0,
                    salt == null ? null : PacketKey.derive(job.secretDigest, salt, size)),
                    membership == null ? null : membership.uplink, log.dataplaneLines(job.tenant));
            job.packetKeySalt = salt;
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
            log.warn(LOG, job.tenant, grant.reason());
        }
        job.number = number;
        job.lastHeard.heard(System.nanoTime());
        job.id = 1 + (JOB_IDS.nextLong() >>> 1) % (Long.MAX_VALUE - 1); // a credential: unguessable, never 0
        // In rank order (Map.copyOf would iterate in an arbitrary order): Status lists the workers by rank.
        job.endpoints = Collections.unmodifiableMap(new TreeMap<>(job.joining.values()));
        byNumber[number] = job;
        log.info(LOG, job.tenant, "job '" + job.name + "' installed as job number " + number + ": " + job.workers()
                + " workers, " + JobRegistry.describe(p));
        job.watchGraceMs.forEach((rank, graceMs) -> job.watchDeadlines.put(rank,
                timer.schedule(() -> watchDeadline.missed(job, rank, graceMs), graceMs, TimeUnit.MILLISECONDS)));
        job.joining.release();
    }

    /**
     * Why a job cannot have authenticated packets (docs/ARCHITECTURE.md section 19), or null: its key derives from
     * the job secret, and a leaf does not carry tags to its spine.
     */
    private String packetAuthenticationRefused(byte[] secretDigest) {
        if (spine != null) {
            return "this switch is a leaf, and authenticated packets are not carried between a leaf and its spine;"
                    + " join the spine directly or run the job without packet authentication";
        }
        if (secretDigest == null) {
            return "their key derives from the job secret, and the job has none; give every rank of the job the same"
                    + " secret (switchml.jobSecretFile or --job-secret-file)";
        }
        return null;
    }

    /** The random salt of one run of a job with authenticated packets: public, it makes the run's key its own. */
    private static byte[] freshSalt() {
        byte[] salt = new byte[PacketKey.SALT_BYTES];
        SALTS.nextBytes(salt);
        return salt;
    }

    /** Fails every waiting rank of a job that cannot be installed, and forgets the job. */
    private void refuse(Job job, ControlException error) {
        log.warn(LOG, job.tenant, error.getMessage());
        if (job.spine != null) {
            job.spine.drop(); // the spine takes this leaf for dead and aborts its job, so the other leaves fail too
        }
        job.joining.fail(error);
        byName.remove(job.name, job);
    }

    /**
     * The job's tenant and what its other running jobs leave it of its share of the pool's bytes and slots and
     * of its byte quota (see {@link SlotAdmission.Tenant}).
     */
    private SlotAdmission.Tenant tenantOf(Job job) {
        if (job.tenant == null) {
            return SlotAdmission.Tenant.UNLIMITED;
        }
        long usedBytes = 0;
        long usedSlots = 0;
        for (Job other : byNumber) {
            if (other != null && other != job && job.tenant.equals(other.tenant) && other.installed() && !other.aborted()) {
                JobSpec spec = dataplane.job(other.number).orElse(null);
                if (spec != null) {
                    usedBytes += spec.memoryBytes();
                    usedSlots += spec.slots();
                }
            }
        }
        SlotPool pool = dataplane.slotPool();
        double share = shareOf(job.tenant);
        long shareBytes = share >= 1 ? Long.MAX_VALUE : (long) (pool.poolBytes() * share);
        long shareSlots = share >= 1 ? Long.MAX_VALUE : (long) (pool.poolSlots() * share);
        boolean quota = security.tenantQuotaBytes() < shareBytes;
        long freeBytes = Math.min(shareBytes, security.tenantQuotaBytes()) - usedBytes;
        return new SlotAdmission.Tenant(job.tenant, freeBytes, shareSlots == Long.MAX_VALUE ? Long.MAX_VALUE
                : shareSlots - usedSlots, quota ? "--tenant-quota-bytes" : "its share of the switch, --tenant-share " + share);
    }

    /**
     * Why {@code tenant} may not install another job: its running jobs hold its share of the job table already
     * (forming jobs are bounded by the waiting joins' caps); null when it may.
     */
    private String jobTableShareFull(String tenant) {
        if (tenant == null || security.tenantShare() >= 1) {
            return null;
        }
        int limit = Math.max(1, (int) (ProtocolConstants.MAX_JOBS * shareOf(tenant)));
        int held = 0;
        for (Job j : byNumber) {
            if (j != null && tenant.equals(j.tenant) && !j.aborted()) {
                held++;
            }
        }
        return held < limit ? null : "tenant " + tenant + " already runs " + held + " jobs, its share of the switch's "
                + ProtocolConstants.MAX_JOBS + " job numbers (--tenant-share " + shareOf(tenant) + "); end one first";
    }

    /**
     * Local callers whose user the kernel's table did not show ({@link Caller#UNKNOWN_LOCAL}, one tenant) get
     * this part of a tenant's share and of its waiting joins: the smallest share, since anyone may be among them.
     */
    static final int UNKNOWN_LOCAL_PARTS = 8;

    /** A tenant's share of the pool and the job table: {@code --tenant-share}, an eighth of it for unknown local callers. */
    private double shareOf(String tenant) {
        double share = security.tenantShare();
        return share < 1 && Caller.UNKNOWN_LOCAL.equals(tenant) ? share / UNKNOWN_LOCAL_PARTS : share;
    }

    /** What admission charges per slot of a job with these parameters. */
    private static long slotBytes(JobParameters p) {
        return JobSpec.slotBytes(PayloadSize.ofElements(p.getElementsPerPacket()), p.getNumWorkers());
    }

    private static String describePeer(InetAddress peer) {
        return peer == null ? "an unknown address" : peer.getHostAddress();
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
}
