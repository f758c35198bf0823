package io.switchml.controller;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.switchml.api.ControlPlaneException;
import io.switchml.control.ControlChannel;
import io.switchml.control.TlsSettingNames;
import io.switchml.controller.proto.BarrierRequest;
import io.switchml.controller.proto.BroadcastRequest;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.DiagnoseRequest;
import io.switchml.controller.proto.DiagnoseResponse;
import io.switchml.controller.proto.JobEvent;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.LeaveRequest;
import io.switchml.controller.proto.WatchRequest;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.UplinkSpec;
import io.switchml.protocol.LeafRanks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A leaf controller's link to its spine's controller (docs/ARCHITECTURE.md section 9): the leaf
 * joins the spine as rank I of a job of L workers once its own ranks are all there, holds a watch
 * there for as long as its job runs, relays its ranks' barriers and broadcasts once they are all in,
 * and leaves once they have all left. The gRPC calls block, so they run on this link's own threads;
 * their answers come back to the registry as commands on its agent.
 */
final class SpineLink implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SpineLink.class);
    /** Extra time for a call beyond the wait the spine enforces itself, so that its answer comes first. */
    private static final long SLACK_MS = 5_000;
    /** How often the connection to the spine is pinged while the watch is open (a silent spine host ends it). */
    private static final Duration KEEPALIVE = Duration.ofSeconds(10);
    /** How long a leaf's diagnosis waits for the spine's (a stalled job's worker is waiting for it). */
    static final Duration DIAGNOSIS_DEADLINE = Duration.ofSeconds(2);

    /** What the leaf's jobs hear from the spine's watch; implementations run it on the registry's agent. */
    interface Events {
        /** The spine aborted its job because leaves dropped out (the ranks they serve are gone). */
        void spineAborted(Job job, List<Integer> failedRanks, String reason);

        /** A worker at another leaf left after {@code operations} all-reduces (the spine relayed its leaf's word). */
        void leftAtAnotherLeaf(Job job, int rank, long operations);

        /** The spine is gone (its watch broke) or ended the job's watch unasked. */
        void spineLost(Job job, String reason);
    }

    /** The outcome of a join at the spine; called on the registry's agent. */
    interface Joined {
        void joined(SpineMembership membership);

        void failed(ControlException error);
    }

    private final LeafRole role;
    private final AggregationSwitch dataplane;
    private final ControllerAgent agent;
    private final Events events;
    private final ControlChannel channel;
    private final ExecutorService calls = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "switchml-spine-link");
        t.setDaemon(true);
        return t;
    });

    SpineLink(LeafRole role, AggregationSwitch dataplane, ControllerAgent agent, Events events) {
        this.role = role;
        this.dataplane = dataplane;
        this.agent = agent;
        this.events = events;
        this.channel = ControlChannel.open(role.spine(), role.spineCredentials(), TlsSettingNames.SPINE, KEEPALIVE,
                "is the spine's switch running, and have all leaves' ranks joined?", true);
    }

    LeafRole role() {
        return role;
    }

    /** The spine-level description of this leaf, for messages. */
    String describe() {
        return "leaf " + role.leafIndex() + " of " + role.leaves() + " under the spine at " + role.spine();
    }

    /**
     * Joins the spine's job for {@code job} (whose local ranks are all here) with the window the local
     * pool granted, then opens the watch there; {@code joined} hears the outcome.
     */
    void join(Job job, int slotsPerThread, Joined joined) {
        JobParameters p = job.parameters;
        int[] leafPorts = dataplane.ports();
        JoinRequest.Builder request = JoinRequest.newBuilder().setJobName(job.name).setRank(role.leafIndex())
                .setParameters(JobParameters.newBuilder().setNumWorkers(role.leaves())
                        .setElementsPerPacket(p.getElementsPerPacket()).setSlotsPerThread(slotsPerThread)
                        .setThreads(p.getThreads()).setOneRoundElements(0))
                .setTimeoutMs(job.joinTimeoutMs).setWatch(true).setLeaf(true);
        // The spine sends thread t's results to the leaf port that owns thread t's slots.
        for (int thread = 0; thread < p.getThreads(); thread++) {
            request.addPorts(leafPorts[thread % leafPorts.length]);
        }
        calls.execute(() -> {
            SpineMembership membership;
            try {
                membership = joinAndWatch(job, request);
            } catch (ControlException e) {
                agent.callback(() -> joined.failed(e));
                return;
            }
            agent.callback(() -> joined.joined(membership));
        });
    }

    private SpineMembership joinAndWatch(Job job, JoinRequest.Builder request) {
        String what = "join job '" + job.name + "' at the spine as " + describe();
        JoinResponse answer;
        InetAddress spineHost;
        try {
            spineHost = ipv4(role.spine().host(), "the spine's controller host");
            request.setAddress(uplinkAddress(spineHost).getHostAddress());
            answer = channel.call(what, Duration.ofMillis(job.joinTimeoutMs + SLACK_MS), stub -> stub.join(request.build()));
        } catch (ControlPlaneException e) {
            Status.Code code = Status.fromThrowable(e.getCause()).getCode();
            boolean refused = code == Status.Code.UNAUTHENTICATED || code == Status.Code.PERMISSION_DENIED;
            throw new ControlException(code.toStatus(), e.getMessage() + (refused ? " (a leaf proves itself to a protected"
                    + " spine with the spine's operator token: switchml switch --spine-token-file, and --spine-tls-ca for"
                    + " TLS)" : ""));
        } catch (IllegalArgumentException e) {
            throw new ControlException(Status.FAILED_PRECONDITION, "cannot " + what + ": " + e.getMessage());
        }
        UplinkSpec uplink;
        try {
            InetAddress spineDataplane = answer.getSwitchAddress().isEmpty() ? spineHost
                    : ipv4(answer.getSwitchAddress(), "the spine's dataplane address");
            int[] spinePorts = answer.getSwitchPortsList().stream().mapToInt(Integer::intValue).toArray();
            uplink = new UplinkSpec(spineDataplane, spinePorts, answer.getJobNumber());
        } catch (IllegalArgumentException e) {
            // No watch is opened: the spine aborts its job when the promised watch does not come.
            throw new ControlException(Status.FAILED_PRECONDITION, "joined job '" + job.name + "' at the spine as "
                    + describe() + ", but its answer is unusable: " + e.getMessage());
        }
        int window = answer.getSlotsPerThread() > 0 ? answer.getSlotsPerThread() : request.getParameters().getSlotsPerThread();
        return watch(job, answer, window, uplink);
    }

    /** Opens the leaf's watch on the spine's job and waits until the spine has registered it. */
    private SpineMembership watch(Job job, JoinResponse answer, int window, UplinkSpec uplink) {
        AtomicReference<ClientCallStreamObserver<WatchRequest>> call = new AtomicReference<>();
        SpineMembership membership = new SpineMembership(answer.getJobNumber(), answer.getJobId(), window,
                answer.getAdmission(), uplink, () -> {
                    ClientCallStreamObserver<WatchRequest> c = call.get();
                    if (c != null) {
                        c.cancel("the leaf's local job ended", null);
                    }
                });
        CompletableFuture<Void> watching = new CompletableFuture<>();
        WatchRequest request = WatchRequest.newBuilder().setJobNumber(answer.getJobNumber()).setJobId(answer.getJobId())
                .setRank(role.leafIndex()).build();
        ControllerGrpc.newStub(channel.channel()).watch(request, new ClientResponseObserver<WatchRequest, JobEvent>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
                call.set(requestStream);
            }

            @Override
            public void onNext(JobEvent event) {
                switch (event.getKind()) {
                    case WATCHING -> watching.complete(null);
                    case RANKS_FAILED -> {
                        if (!membership.over()) {
                            spineAborted(job, event);
                        }
                    }
                    case RANK_LEFT -> {
                        // A leaf's own leave (all its ranks gone) was announced rank by rank before, relayed.
                        if (event.getRelayed() && !membership.over()) {
                            events.leftAtAnotherLeaf(job, event.getLeftRank(), event.getLeftOperations());
                        }
                    }
                    default -> LOG.debug("{}: spine event {} for job '{}'", describe(), event.getKind(), job.name);
                }
            }

            @Override
            public void onError(Throwable t) {
                ended(ControlChannel.describe(t));
            }

            @Override
            public void onCompleted() {
                ended("the spine's controller ended this leaf's watch");
            }

            private void ended(String why) {
                if (!watching.isDone()) {
                    watching.completeExceptionally(new IllegalStateException(why));
                } else if (!membership.over()) {
                    events.spineLost(job, "job '" + job.name + "' lost its spine: the watch of " + describe() + " ended ("
                            + why + "); the spine's switch died, restarted or became unreachable");
                }
            }
        });
        try {
            watching.get(job.joinTimeoutMs, TimeUnit.MILLISECONDS);
            return membership;
        } catch (ExecutionException | TimeoutException e) {
            membership.drop();
            String why = e instanceof TimeoutException ? "no confirmation within " + job.joinTimeoutMs + " ms"
                    : e.getCause().getMessage();
            throw new ControlException(Status.UNAVAILABLE, "joined job '" + job.name + "' at the spine as " + describe()
                    + ", but could not open the watch there: " + why);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            membership.drop();
            throw new ControlException(Status.UNAVAILABLE, "interrupted while joining the spine");
        }
    }

    /** The spine aborted its job: the ranks of the leaves that dropped out are the job's dead ranks here. */
    private void spineAborted(Job job, JobEvent event) {
        Leaves dropped = leaves(job, event.getFailedRanksList());
        events.spineAborted(job, dropped.ranks(), dropped.described() + " dropped out of job '" + job.name
                + "' at the spine at " + role.spine() + ": " + event.getReason());
    }

    /**
     * Relays a barrier (root -1) or a broadcast whose local ranks are all in to the spine's job, as
     * this leaf's call; {@code reply} (on the registry's agent) gets the spine's answer: the root's
     * value, which the root's leaf supplied.
     */
    void meet(Job job, long sequence, int root, byte[] value, int timeoutMs, JobRegistry.Reply<byte[]> reply) {
        SpineMembership m = job.spine;
        Duration deadline = Duration.ofMillis(timeoutMs + SLACK_MS);
        calls.execute(() -> {
            byte[] answer;
            try {
                if (root < 0) {
                    channel.call("relay barrier #" + sequence + " of job '" + job.name + "' to the spine as " + describe(),
                            deadline, stub -> stub.barrier(BarrierRequest.newBuilder().setJobNumber(m.jobNumber)
                                    .setJobId(m.jobId).setRank(role.leafIndex()).setSequence(sequence).setTimeoutMs(timeoutMs).build()));
                    answer = new byte[0];
                } else {
                    int rootLeaf = LeafRanks.leafOf(root, role.leaves(), job.workers());
                    answer = channel.call("relay broadcast #" + sequence + " of job '" + job.name + "' to the spine as "
                            + describe(), deadline, stub -> stub.broadcast(BroadcastRequest.newBuilder()
                            .setJobNumber(m.jobNumber).setJobId(m.jobId).setRank(role.leafIndex()).setRoot(rootLeaf).setSequence(sequence)
                            .setValue(ByteString.copyFrom(value)).setTimeoutMs(timeoutMs).build())).getValue().toByteArray();
                }
            } catch (ControlPlaneException e) {
                agent.callback(() -> reply.error(new ControlException(Status.fromThrowable(e.getCause()).getCode().toStatus(), e.getMessage())));
                return;
            }
            agent.callback(() -> reply.ok(answer));
        });
    }

    /** Leaves of the hierarchy in words ("leaf 1 (ranks 2..3)", comma-separated) and the ranks they serve, ascending. */
    record Leaves(String described, List<Integer> ranks) {
    }

    /** The spine job's ranks {@code leafIndices} (ascending) as this job's leaves; indices beyond the leaves are ignored. */
    private Leaves leaves(Job job, List<Integer> leafIndices) {
        List<Integer> ranks = new ArrayList<>();
        List<String> described = new ArrayList<>();
        for (int leaf : leafIndices) {
            if (leaf < role.leaves()) {
                int first = LeafRanks.firstRank(leaf, role.leaves(), job.workers());
                for (int rank = first; rank < first + LeafRanks.rankCount(leaf, role.leaves(), job.workers()); rank++) {
                    ranks.add(rank);
                }
                described.add("leaf " + leaf + " (ranks " + LeafRanks.describe(leaf, role.leaves(), job.workers()) + ")");
            }
        }
        return new Leaves(String.join(", ", described), ranks);
    }

    /**
     * The leaves the spine's job still waits for (the spine's diagnosis of its job); none when the spine cannot
     * tell or does not answer within {@link #DIAGNOSIS_DEADLINE}.
     */
    Leaves lagging(Job job, SpineMembership m) {
        DiagnoseResponse answer;
        try {
            answer = channel.call("diagnose job '" + job.name + "' at the spine as " + describe(), DIAGNOSIS_DEADLINE,
                    stub -> stub.diagnose(DiagnoseRequest.newBuilder().setJobNumber(m.jobNumber).setJobId(m.jobId).build()));
        } catch (ControlPlaneException e) {
            LOG.debug("{}", e.getMessage());
            return new Leaves("", List.of());
        }
        return leaves(job, answer.getMissingRanksList());
    }

    /**
     * Local worker {@code rank} left {@code job} while its other ranks go on: the spine tells the other leaves,
     * whose workers' all-reduces from {@code operations} on can never complete (as at one switch).
     */
    void relayLeft(Job job, int rank, long operations) {
        SpineMembership m = job.spine;
        calls.execute(() -> relay(job, m, rank, operations));
    }

    /**
     * Every local rank of {@code job} left, {@code lastRank} last: the spine hears of it as of the others (so the
     * other leaves' workers learn who), then the leaf leaves the spine's job, which ends its watch there.
     */
    void leave(Job job, int lastRank, long operations) {
        SpineMembership m = job.spine;
        m.leaving();
        calls.execute(() -> {
            relay(job, m, lastRank, operations);
            try {
                channel.call("leave job '" + job.name + "' at the spine as " + describe(), Duration.ofSeconds(5),
                        stub -> stub.leave(LeaveRequest.newBuilder().setJobNumber(m.jobNumber).setJobId(m.jobId)
                                .setRank(role.leafIndex()).setOperations(operations).build()));
            } catch (ControlPlaneException e) {
                LOG.warn("{}", e.getMessage());
            }
        });
    }

    private void relay(Job job, SpineMembership m, int rank, long operations) {
        try {
            channel.call("relay to the spine, as " + describe() + ", that rank " + rank + " left job '" + job.name + "'",
                    Duration.ofSeconds(5), stub -> stub.leave(LeaveRequest.newBuilder().setJobNumber(m.jobNumber)
                            .setJobId(m.jobId).setRank(role.leafIndex()).setOperations(operations).setRelayOnly(true)
                            .setRelayedRank(rank).build()));
        } catch (ControlPlaneException e) {
            LOG.warn("{} (the other leaves' workers will wait for their operation timeout)", e.getMessage());
        }
    }

    /** This leaf's address as the spine sees it: the one configured, the switch's bind address, or the route's. */
    private InetAddress uplinkAddress(InetAddress spineHost) {
        if (role.uplinkAddress() != null && !role.uplinkAddress().isEmpty()) {
            return JoinValidator.ipv4(role.uplinkAddress());
        }
        if (!dataplane.bindAddress().isAnyLocalAddress()) {
            return dataplane.bindAddress();
        }
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(spineHost, role.spine().port()); // picks the route's source address; sends nothing
            return probe.getLocalAddress();
        } catch (IOException e) {
            throw new IllegalArgumentException("no route to the spine at " + spineHost.getHostAddress() + ": " + e.getMessage()
                    + "; give this leaf's address as the spine sees it (--uplink-address)", e);
        }
    }

    private static InetAddress ipv4(String host, String what) {
        try {
            InetAddress address = InetAddress.getByName(host);
            if (!(address instanceof Inet4Address)) {
                throw new IllegalArgumentException(what + " " + host + " is not IPv4; the switches key on IPv4 addresses");
            }
            return address;
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(what + " " + host + " is unknown", e);
        }
    }

    @Override
    public void close() {
        calls.shutdownNow();
        channel.close();
    }
}
