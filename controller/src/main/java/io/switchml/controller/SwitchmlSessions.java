package io.switchml.controller;

import io.grpc.Status;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.WorkerStatus;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.InsufficientSlotsException;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.SlotPool;
import io.switchml.dataplane.WorkerEndpoint;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * SwitchML's UDP sessions (service Session of switchml.proto). SwitchML's workers never wait in
 * UdpSession: rank 0 registers alone, starting the session, and then waits in a Barrier, which the
 * other ranks enter before they register. So every registration is answered at once, and the
 * session is installed on the switch by the registration that completes it, before SwitchML's
 * final Barrier lets any rank send.
 *
 * <p>An installed session is a job with SwitchML's semantics: workers matched by source address
 * alone (any UDP port, see {@link WorkerEndpoint#matchedByAddress}), their tsi and job number fields
 * opaque, and every slot of the 14-bit pool index available, since SwitchML's workers choose their
 * pool indices without telling the controller. Those 2^14 slots come out of the switch's aggregator
 * pool like any job's, but a session's window cannot shrink (its workers never learn one): a session
 * that does not fit is refused with RESOURCE_EXHAUSTED.
 *
 * <p>SwitchML's workers never leave, and every run takes a new session id. So sessions end by being
 * replaced: a registration into a session removes any <em>earlier</em> session (forming or
 * installed) that holds the same worker address, as SwitchML's controller clears its UDP workers
 * when rank 0 registers; rank 0 registering again in its own session (a restarted run) starts that
 * session afresh. Only SwitchML sessions are ever removed here: an address held by another kind of
 * job is refused. Every method is synchronized; nothing here blocks.
 */
final class SwitchmlSessions {
    private static final Logger LOG = LoggerFactory.getLogger(SwitchmlSessions.class);

    /**
     * Sessions whose ranks are still registering, at most: SwitchML's protocol has no credentials and
     * its sessions never expire, so a flood of fresh session ids must be refused, not remembered.
     */
    static final int MAX_FORMING_SESSIONS = 1024;

    private final AggregationSwitch dataplane;
    /** Sessions by id, forming or installed. */
    private final Map<Long, Session> sessions = new HashMap<>();
    /** Orders sessions by when their first rank registered: newer ones replace older ones. */
    private long nextOrder;
    private long replaced;
    private long restarted;

    /** A session: the parameters its first rank brought, the ranks registered so far, and its job once installed. */
    private static final class Session {
        final long id;
        final long order;
        final int workers;
        final PayloadSize size;
        final TreeMap<Integer, InetAddress> ranks = new TreeMap<>();
        /** The job number on the switch; -1 while ranks are still registering. */
        int jobNumber = -1;
        /** When a rank last registered or a packet of the session last reached the switch (see {@link #reclaimIdle}). */
        final LastHeard lastHeard = new LastHeard();
        /** Whose share it counts against: its rank 0's local user, else all sessions' one tenant. */
        String tenant = TENANT;

        Session(long id, long order, int workers, PayloadSize size) {
            this.id = id;
            this.order = order;
            this.workers = workers;
            this.size = size;
        }

        boolean installed() {
            return jobNumber >= 0;
        }

        String name() {
            return "session " + Long.toUnsignedString(id);
        }

        String describe() {
            return name() + (installed() ? " (job number " + jobNumber + ")" : " (ranks " + ranks.keySet()
                    + " of " + workers + " registered)");
        }
    }

    /** SwitchML's sessions carry no credentials: their lines share one budget (JobLog). */
    private static final String TENANT = "SwitchML sessions";
    private final JobLog log;
    private final double tenantShare;

    SwitchmlSessions(AggregationSwitch dataplane, JobLog log) {
        this(dataplane, log, 1);
    }

    /** @param tenantShare the share of the pool all sessions together may hold (they are one tenant), at least one session's */
    SwitchmlSessions(AggregationSwitch dataplane, JobLog log, double tenantShare) {
        this.dataplane = dataplane;
        this.log = log;
        this.tenantShare = tenantShare;
    }

    /**
     * Registers the rank in its session and returns; the registration that completes the session
     * installs it on the switch.
     *
     * @throws ControlException INVALID_ARGUMENT for a malformed request or one that disagrees with
     *                          its session, FAILED_PRECONDITION when a rank other than 0 registers
     *                          in a session rank 0 has not started, ALREADY_EXISTS when the rank or
     *                          its address is taken, RESOURCE_EXHAUSTED when the session does not fit
     */
    synchronized void register(UdpSessionRequest request) {
        register(request, null);
    }

    /**
     * As {@link #register(UdpSessionRequest)}, for a caller of the switch's host whose user the kernel named
     * ({@code localTenant}, "uid 1001 (alice)"; null: another host's, or unknown): a session it starts counts
     * against that user's share of the sessions, not against the one share of every other session.
     */
    synchronized void register(UdpSessionRequest request, String localTenant) {
        String problem = problem(request);
        if (problem != null) {
            throw new ControlException(Status.INVALID_ARGUMENT, "invalid UdpSession request: " + problem);
        }
        long id = request.getSessionId();
        int rank = request.getRank();
        PayloadSize size = PayloadSize.ofCode(request.getPacketSizeValue());
        InetAddress address = ipv4(request.getIpv4());
        Session session = sessions.get(id);
        if (session != null && rank == 0) {
            // Rank 0 started this session already (only rank 0 starts one): SwitchML's rank 0 clears
            // the session's workers before registering, so this is a restarted run.
            remove(session);
            restarted++;
            log.info(LOG, TENANT, "SwitchML " + session.describe()
                    + " starts again (rank 0 registered again): its earlier registrations are cleared");
            session = null;
        }
        boolean created = session == null;
        if (created && rank != 0) {
            // Only rank 0 starts a session, so that a late rank of a replaced run cannot bring it back.
            throw new ControlException(Status.FAILED_PRECONDITION, "rank " + rank + " registers in session "
                    + Long.toUnsignedString(id) + ", which no rank 0 has started, or a newer session has replaced;"
                    + " SwitchML's rank 0 calls UdpSession first and the other ranks after the Barrier that follows it");
        }
        if (created && sessions.values().stream().filter(s -> !s.installed()).count() >= MAX_FORMING_SESSIONS) {
            throw new ControlException(Status.RESOURCE_EXHAUSTED, "the switch already holds " + MAX_FORMING_SESSIONS
                    + " SwitchML sessions whose ranks are still registering; session " + Long.toUnsignedString(id)
                    + " is refused (a new run of one of them replaces it)");
        }
        if (created) {
            session = new Session(id, nextOrder, request.getNumWorkers(), size);
            if (localTenant != null) {
                session.tenant = TENANT + " of " + localTenant;
            }
        } else if (session.workers != request.getNumWorkers() || session.size != size) {
            throw new ControlException(Status.INVALID_ARGUMENT, "rank " + rank + " registers in " + session.name()
                    + " with num_workers " + request.getNumWorkers() + " and packet_size " + request.getPacketSize()
                    + ", but the ranks already registered use num_workers " + session.workers + " and "
                    + session.size.bytes() + "-byte packets; every worker of a session must be configured alike");
        }
        InetAddress previous = session.ranks.get(rank);
        if (previous != null) {
            if (previous.equals(address)) {
                return; // the same registration again: nothing changes
            }
            throw new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " has already registered in "
                    + session.name() + " with IPv4 " + previous.getHostAddress() + ", not " + address.getHostAddress()
                    + "; each rank registers once (is a rank given to two workers?)");
        }
        for (Map.Entry<Integer, InetAddress> other : session.ranks.entrySet()) {
            if (other.getValue().equals(address)) {
                throw new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " of " + session.name() + " gives IPv4 "
                        + address.getHostAddress() + ", already given by rank " + other.getKey()
                        + "; the switch tells SwitchML workers apart by address, so each needs its own");
            }
        }
        String foreign = foreignHolder(address);
        if (foreign != null) {
            throw new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " of " + session.name() + " gives IPv4 "
                    + address.getHostAddress() + ", which " + foreign + " already matches by address alone; SwitchML"
                    + " sessions replace only earlier SwitchML sessions, so this one is refused (give the worker"
                    + " another address, or end that job first)");
        }
        Session holder = holderOf(address, session);
        if (holder != null && holder.order > session.order) {
            throw new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " of " + session.name() + " gives IPv4 "
                    + address.getHostAddress() + ", which the newer " + holder.describe() + " holds; a new run replaces"
                    + " the sessions before it, never the reverse (is this rank from an old run?)");
        }
        if (created) {
            String full = capacityProblem(session, holder);
            if (full != null) {
                throw new ControlException(Status.RESOURCE_EXHAUSTED, full);
            }
        }
        if (holder != null) {
            remove(holder);
            replaced++;
            log.info(LOG, TENANT, "SwitchML " + holder.describe() + " replaced: rank " + rank + " of the newer "
                    + session.name() + " registered its worker address " + address.getHostAddress()
                    + "; packets of the old run still in flight are dropped as from an unknown source");
        }
        if (created) {
            nextOrder++;
            sessions.put(id, session);
        }
        session.ranks.put(rank, address);
        session.lastHeard.heard(System.nanoTime());
        LOG.debug("SwitchML {}: rank {} registered with IPv4 {}", session.name(), rank, address.getHostAddress());
        if (session.ranks.size() == session.workers) {
            install(session);
        }
    }

    /** How many sessions were removed because a newer one took a worker address of theirs. */
    synchronized long replacedSessions() {
        return replaced;
    }

    /** How many sessions were started afresh by their rank 0 registering again. */
    synchronized long restartedSessions() {
        return restarted;
    }

    /** The job number of an installed session, for inspection. */
    synchronized OptionalInt jobNumber(long sessionId) {
        Session session = sessions.get(sessionId);
        return session != null && session.installed() ? OptionalInt.of(session.jobNumber) : OptionalInt.empty();
    }

    private static String problem(UdpSessionRequest request) {
        int n = request.getNumWorkers();
        if (n < 1 || n > ProtocolConstants.MAX_WORKERS) {
            return "num_workers " + Integer.toUnsignedString(n) + " outside 1.." + ProtocolConstants.MAX_WORKERS;
        }
        if (request.getRank() < 0 || request.getRank() >= n) {
            return "rank " + Integer.toUnsignedString(request.getRank()) + " outside 0.." + (n - 1);
        }
        int sizeCode = request.getPacketSizeValue();
        if (sizeCode < PayloadSize.B128.code() || sizeCode > PayloadSize.B1024.code()) {
            return "packet_size " + sizeCode + " is none of MTU_128, MTU_256, MTU_512, MTU_1024";
        }
        InetAddress address = ipv4(request.getIpv4());
        String notUnicast = JoinValidator.notUnicast(address);
        if (notUnicast != null) {
            return "ipv4 " + address.getHostAddress() + " " + notUnicast + "; the switch identifies a SwitchML worker by"
                    + " its IPv4 address and sends its results there, so it must be the worker's own unicast address";
        }
        return null;
    }

    /** The other session that holds this worker address, or null. */
    private Session holderOf(InetAddress address, Session except) {
        for (Session other : sessions.values()) {
            if (other != except && other.ranks.containsValue(address)) {
                return other;
            }
        }
        return null;
    }

    /**
     * A job on the switch that is no SwitchML session of ours and matches this address whatever the
     * port (so the switch could not tell its packets from the session's), described; else null.
     * Jobs whose workers have exact ports share an address with a session without harm: their
     * entries win for their own ports.
     */
    private String foreignHolder(InetAddress address) {
        for (int n = 0; n < ProtocolConstants.MAX_JOBS; n++) {
            JobSpec job = dataplane.job(n).orElse(null);
            if (job == null || ownsJob(n)) {
                continue;
            }
            for (WorkerEndpoint endpoint : job.endpoints()) {
                if (endpoint.anyPort() && endpoint.address().equals(address)) {
                    return "job '" + job.name() + "' (job number " + n + ")";
                }
            }
        }
        return null;
    }

    private boolean ownsJob(int number) {
        return sessions.values().stream().anyMatch(s -> s.jobNumber == number);
    }

    /**
     * Why a new session could not be installed now, counting the slots of the session it replaces;
     * null when it fits. Checked at its first registration so that the first rank, not only the
     * last, hears of it.
     */
    private String capacityProblem(Session session, Session replacing) {
        boolean freesNumber = replacing != null && replacing.installed();
        if (!freesNumber && freeJobNumber(session.id) < 0) {
            return tooManyJobs(session);
        }
        SlotPool pool = dataplane.slotPool();
        int freed = freesNumber ? ProtocolConstants.MAX_SLOTS : 0;
        if (Math.min(pool.jobQuotaSlots(), pool.freeSlots() + freed) < ProtocolConstants.MAX_SLOTS) {
            return "the switch cannot take " + session.name() + ": " + pool.describe() + tooSmall();
        }
        // Sessions carry no credentials: together they are one tenant, with one tenant's share of the pool; those that
        // a local user's rank 0 started are that user's (security round 5).
        long share = Math.max(ProtocolConstants.MAX_SLOTS, (long) (pool.poolSlots() * tenantShare));
        boolean freesOwn = freesNumber && replacing.tenant.equals(session.tenant);
        long held = (long) ProtocolConstants.MAX_SLOTS * (installedSessions(session.tenant) - (freesOwn ? 1 : 0));
        if (held + ProtocolConstants.MAX_SLOTS > share) {
            return "the switch cannot take " + session.name() + ": SwitchML's sessions"
                    + (session.tenant.equals(TENANT) ? "" : " of " + session.tenant.substring(TENANT.length() + 4))
                    + " hold " + held + " slots, their"
                    + " share of the pool (--tenant-share " + tenantShare + " of " + pool.poolSlots() + " slots, at least one"
                    + " session's " + ProtocolConstants.MAX_SLOTS + "); wait for one to end, or end one with"
                    + " `switchml ctl end-session`";
        }
        return null;
    }

    private int installedSessions(String tenant) {
        int installed = 0;
        for (Session s : sessions.values()) {
            if (s.installed() && s.tenant.equals(tenant)) {
                installed++;
            }
        }
        return installed;
    }

    private static String tooManyJobs(Session session) {
        return "the switch already runs " + ProtocolConstants.MAX_JOBS + " jobs; " + session.name() + " cannot be installed";
    }

    private static String tooSmall() {
        return " (a SwitchML session needs all " + ProtocolConstants.MAX_SLOTS
                + " slots of the pool index; its window cannot be made smaller)";
    }

    /**
     * Forgets every session, forming or installed, that no rank registered in and no packet of reached
     * the switch for {@code idleNanos}: SwitchML's workers never leave, so a session whose run ended
     * would otherwise hold its 16 384 slots until a newer run replaced it.
     *
     * @return how many were reclaimed
     */
    synchronized int reclaimIdle(long now, long idleNanos) {
        List<Session> idle = new ArrayList<>();
        for (Session session : sessions.values()) {
            OptionalInt activity = session.installed() ? dataplane.activity(session.jobNumber) : OptionalInt.empty();
            if (session.lastHeard.silentFor(activity, now, idleNanos)) {
                idle.add(session);
            }
        }
        for (Session session : idle) {
            log.warn(LOG, TENANT, "SwitchML " + session.describe() + " reclaimed: no rank registered and no packet"
                    + " reached the switch for " + TimeUnit.NANOSECONDS.toSeconds(idleNanos) + " s");
            remove(session);
        }
        return idle.size();
    }

    /**
     * The installed sessions as jobs, for `switchml ctl jobs` and Status: SwitchML's workers hold no job
     * name, so each is named for its session id, and matched by address on any port.
     */
    synchronized List<JobStatus> statuses() {
        List<JobStatus> all = new ArrayList<>();
        for (Session session : sessions.values()) {
            if (!session.installed()) {
                continue;
            }
            JobStatus.Builder b = JobStatus.newBuilder().setJobNumber(session.jobNumber).setJobName(jobName(session))
                    .setTenant(session.tenant).setInstalled(true).setParameters(JobParameters.newBuilder().setNumWorkers(session.workers)
                            .setElementsPerPacket(session.size.elements()).setSlotsPerThread(ProtocolConstants.MAX_SLOTS)
                            .setThreads(1));
            session.ranks.forEach((rank, address) -> {
                b.addWorkers("rank " + rank + " " + address.getHostAddress() + " any port (SwitchML)");
                b.addEndpoints(WorkerStatus.newBuilder().setRank(rank).setAddress(address.getHostAddress()));
            });
            all.add(b.build());
        }
        return all;
    }

    /**
     * Ends the installed session whose job has this number (the operator's Leave: SwitchML's workers never
     * leave themselves). Returns false when no session has it.
     */
    synchronized boolean end(int jobNumber) {
        for (Session session : sessions.values()) {
            if (session.installed() && session.jobNumber == jobNumber) {
                LOG.info("SwitchML {} ended by the operator", session.describe());
                remove(session);
                return true;
            }
        }
        return false;
    }

    private static String jobName(Session session) {
        return "switchml-session-" + Long.toUnsignedString(session.id);
    }

    /** Forgets the session and takes its job, if installed, off the switch. */
    private void remove(Session session) {
        sessions.remove(session.id, session);
        if (session.installed()) {
            dataplane.removeJob(session.jobNumber, log.dataplaneLines(TENANT));
        }
    }

    /**
     * Installs the complete session; when the switch refuses it, the session is forgotten and the
     * rank that completed it is told (the others have been answered already).
     */
    private void install(Session session) {
        int number = freeJobNumber(session.id);
        if (number < 0) {
            throw refuse(session, new ControlException(Status.RESOURCE_EXHAUSTED, tooManyJobs(session)));
        }
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        session.ranks.values().forEach(address -> endpoints.add(WorkerEndpoint.matchedByAddress(address)));
        try {
            dataplane.installJob(new JobSpec(number, jobName(session), session.size,
                    ProtocolConstants.MAX_SLOTS, 1, endpoints, false), null, log.dataplaneLines(TENANT));
        } catch (InsufficientSlotsException e) {
            throw refuse(session, new ControlException(Status.RESOURCE_EXHAUSTED, "the switch refused " + session.name() + ": "
                    + e.getMessage() + tooSmall()));
        } catch (IllegalStateException e) {
            throw refuse(session, new ControlException(Status.ALREADY_EXISTS, "the switch refused " + session.name() + ": "
                    + e.getMessage()));
        }
        session.jobNumber = number;
        log.info(LOG, TENANT, "SwitchML " + session.name() + " installed as job number " + number + ": workers "
                + session.ranks.values().stream().map(InetAddress::getHostAddress).toList() + ", " + session.size.bytes()
                + " B packets");
    }

    /** Forgets a session the switch refused; returns the error for the rank that completed it. */
    private ControlException refuse(Session session, ControlException error) {
        sessions.remove(session.id, session);
        log.warn(LOG, TENANT, error.getMessage() + "; the session's other ranks were answered when they registered and will"
                + " wait in vain");
        return error;
    }

    /**
     * The session's own id when it is a free job number, else the highest free one (this project's
     * jobs take the lowest); -1 when none is free. The number only names the job on the switch:
     * SwitchML's packets carry their own short job id, which the switch does not check.
     */
    private int freeJobNumber(long id) {
        if (id >= 0 && id < ProtocolConstants.MAX_JOBS && dataplane.job((int) id).isEmpty()) {
            return (int) id;
        }
        for (int n = ProtocolConstants.MAX_JOBS - 1; n >= 0; n--) {
            if (dataplane.job(n).isEmpty()) {
                return n;
            }
        }
        return -1;
    }

    /** The uint32 a.b.c.d of switchml.proto as an address. */
    static InetAddress ipv4(int bits) {
        byte[] bytes = {(byte) (bits >>> 24), (byte) (bits >>> 16), (byte) (bits >>> 8), (byte) bits};
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new AssertionError("4 bytes are always an IPv4 address", e);
        }
    }
}
