package io.switchml.controller;

import io.grpc.Status;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.InsufficientSlotsException;
import io.switchml.dataplane.JobSpec;
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
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * SwitchML's UDP sessions (service Session of switchml.proto): the ranks of a session id meet, then
 * the session is installed on the switch as a job with SwitchML's semantics: workers matched by
 * source address alone (any UDP port, see {@link WorkerEndpoint#anyPort}), their tsi and job number
 * fields opaque, and every slot of the 14-bit pool index available, since SwitchML's workers choose
 * their pool indices without telling the controller.
 *
 * <p>Those 2^14 slots come out of the switch's aggregator pool like any job's (the switch checks
 * every installation against the pool and the per-job quota), but admission control cannot shrink
 * a session's window, since its workers never learn one: a session that does not fit is refused
 * with RESOURCE_EXHAUSTED.
 *
 * <p>SwitchML workers never leave: an installed session stays on the switch until a new run of the
 * same session id starts (its first UdpSession removes the old one, as SwitchML's controller clears
 * a session's workers when rank 0 registers) or the service stops. Every method is synchronized;
 * waits park the reply until the rendezvous completes or its timer fires.
 */
final class SwitchmlSessions {
    private static final Logger LOG = LoggerFactory.getLogger(SwitchmlSessions.class);

    private final AggregationSwitch dataplane;
    private final ScheduledExecutorService timer;
    private final long timeoutMs;
    private final Map<Long, Forming> forming = new HashMap<>();
    /** Installed sessions: session id to job number. */
    private final Map<Long, Integer> installed = new HashMap<>();

    /** A session whose ranks are still arriving, with the parameters its first rank brought. */
    private record Forming(long sessionId, int workers, PayloadSize size, Rendezvous<InetAddress> ranks) {
    }

    SwitchmlSessions(AggregationSwitch dataplane, ScheduledExecutorService timer, long timeoutMs) {
        this.dataplane = dataplane;
        this.timer = timer;
        this.timeoutMs = timeoutMs;
    }

    /**
     * Parks the rank until all ranks of its session have arrived, then installs the session and
     * answers every rank with its job number. Returns what to run if the caller goes away meanwhile.
     */
    synchronized Runnable join(UdpSessionRequest request, JobRegistry.Reply<Integer> reply) {
        String problem = problem(request);
        if (problem != null) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "invalid UdpSession request: " + problem));
            return () -> { };
        }
        long id = request.getSessionId();
        int rank = request.getRank();
        PayloadSize size = PayloadSize.ofCode(request.getPacketSizeValue());
        removeInstalled(id);
        Forming session = forming.computeIfAbsent(id, s -> new Forming(s, request.getNumWorkers(), size,
                new Rendezvous<>(request.getNumWorkers())));
        if (session.workers() != request.getNumWorkers() || session.size() != size) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "rank " + rank + " joins session "
                    + Long.toUnsignedString(id) + " with num_workers " + request.getNumWorkers() + " and packet_size "
                    + request.getPacketSize() + ", but the ranks already waiting use num_workers " + session.workers()
                    + " and " + session.size().bytes() + "-byte packets; every worker of a session must be configured alike"));
            return () -> { };
        }
        InetAddress address = ipv4(request.getIpv4());
        String duplicate = duplicate(session, rank, address);
        if (duplicate != null) {
            reply.error(new ControlException(Status.ALREADY_EXISTS, duplicate));
            return () -> { };
        }
        Rendezvous.Waiter<InetAddress> waiter = new Rendezvous.Waiter<>() {
            @Override
            public void released(Map<Integer, InetAddress> values) {
                reply.ok(installed.get(id));
            }

            @Override
            public void failed(ControlException error) {
                reply.error(error);
            }
        };
        boolean complete = session.ranks().arrive(rank, address, waiter,
                timer.schedule(() -> expire(session, rank), timeoutMs, TimeUnit.MILLISECONDS));
        if (complete) {
            install(session);
        }
        return () -> withdraw(session, rank, waiter);
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
        if (request.getIpv4() == 0) {
            return "ipv4 is 0.0.0.0; the switch identifies a SwitchML worker by its IPv4 address";
        }
        return null;
    }

    private static String duplicate(Forming session, int rank, InetAddress address) {
        String name = "session " + Long.toUnsignedString(session.sessionId());
        if (session.ranks().contains(rank)) {
            return "rank " + rank + " has already joined " + name + "; each rank joins once (is a rank given to two workers?)";
        }
        for (Map.Entry<Integer, InetAddress> other : session.ranks().values().entrySet()) {
            if (other.getValue().equals(address)) {
                return "rank " + rank + " of " + name + " gives IPv4 " + address.getHostAddress() + ", already given by rank "
                        + other.getKey() + "; the switch tells SwitchML workers apart by address, so each needs its own";
            }
        }
        return null;
    }

    /** A new run of an installed session starts: the old run's job leaves the switch. */
    private void removeInstalled(long id) {
        Integer number = installed.remove(id);
        if (number != null) {
            dataplane.removeJob(number);
            LOG.info("SwitchML session {} starts again: its previous run (job number {}) is removed from the switch",
                    Long.toUnsignedString(id), number);
        }
    }

    private void install(Forming session) {
        long id = session.sessionId();
        forming.remove(id);
        int number = freeJobNumber(id);
        if (number < 0) {
            session.ranks().fail(new ControlException(Status.RESOURCE_EXHAUSTED, "the switch already runs "
                    + ProtocolConstants.MAX_JOBS + " jobs; session " + Long.toUnsignedString(id) + " cannot be installed"));
            return;
        }
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        session.ranks().values().values().forEach(address -> endpoints.add(WorkerEndpoint.matchedByAddress(address)));
        try {
            dataplane.installJob(new JobSpec(number, "switchml-session-" + Long.toUnsignedString(id), session.size(),
                    ProtocolConstants.MAX_SLOTS, 1, endpoints, false));
        } catch (InsufficientSlotsException e) {
            session.ranks().fail(new ControlException(Status.RESOURCE_EXHAUSTED, "the switch refused session "
                    + Long.toUnsignedString(id) + ": " + e.getMessage() + " (a SwitchML session needs all "
                    + ProtocolConstants.MAX_SLOTS + " slots of the pool index; its window cannot be made smaller)"));
            return;
        } catch (IllegalStateException e) {
            session.ranks().fail(new ControlException(Status.ALREADY_EXISTS, "the switch refused session "
                    + Long.toUnsignedString(id) + ": " + e.getMessage() + " (a worker address is in another running session)"));
            return;
        }
        installed.put(id, number);
        LOG.info("SwitchML session {} installed as job number {}: workers {}, {} B packets", Long.toUnsignedString(id),
                number, endpoints, session.size().bytes());
        session.ranks().release();
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

    private synchronized void expire(Forming session, int rank) {
        session.ranks().expire(rank, missing -> new ControlException(Status.DEADLINE_EXCEEDED, "session "
                + Long.toUnsignedString(session.sessionId()) + ": rank " + rank + " waited " + timeoutMs
                + " ms for the other ranks, but ranks " + missing + " did not call UdpSession; start all "
                + session.workers() + " workers with the same session id"));
        forgetIfEmpty(session);
    }

    private synchronized void withdraw(Forming session, int rank, Rendezvous.Waiter<InetAddress> waiter) {
        if (session.ranks().withdraw(rank, waiter)) {
            LOG.info("rank {} of SwitchML session {} went away while waiting for the other ranks", rank,
                    Long.toUnsignedString(session.sessionId()));
            forgetIfEmpty(session);
        }
    }

    private void forgetIfEmpty(Forming session) {
        if (session.ranks().empty()) {
            forming.remove(session.sessionId(), session);
        }
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
