package io.switchml.controller;

import com.google.protobuf.ByteString;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.switchml.controller.proto.BarrierRequest;
import io.switchml.controller.proto.BarrierResponse;
import io.switchml.controller.proto.BroadcastRequest;
import io.switchml.controller.proto.BroadcastResponse;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.DiagnoseRequest;
import io.switchml.controller.proto.DiagnoseResponse;
import io.switchml.controller.proto.DropProbabilities;
import io.switchml.controller.proto.JobDetailRequest;
import io.switchml.controller.proto.JobDetailResponse;
import io.switchml.controller.proto.IssueJobSecretRequest;
import io.switchml.controller.proto.IssueJobSecretResponse;
import io.switchml.controller.proto.JobEvent;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.LeaveRequest;
import io.switchml.controller.proto.LeaveResponse;
import io.switchml.controller.proto.TransportReport;
import io.switchml.controller.proto.TransportReportResponse;
import io.switchml.controller.proto.SetDropProbabilitiesRequest;
import io.switchml.controller.proto.StatusRequest;
import io.switchml.controller.proto.StatusResponse;
import io.switchml.controller.proto.WatchRequest;
import io.switchml.dataplane.AggregationSwitch;

import java.util.function.Function;
import java.util.function.Supplier;

/** The gRPC face of the controller: turns requests into {@link JobRegistry} calls and back. */
final class ControllerService extends ControllerGrpc.ControllerImplBase {
    private final JobRegistry registry;
    private final SwitchmlSessions sessions;
    private final AggregationSwitch dataplane;
    private final String announcedAddress;
    private final DropSimulatorControl dropSimulator;
    private final PeerRateLimiter joinLimiter;

    /**
     * @param announcedAddress the dataplane address told to workers; empty when the switch listens on
     *                         every address, in which case workers use the controller's host
     */
    ControllerService(JobRegistry registry, SwitchmlSessions sessions, AggregationSwitch dataplane, String announcedAddress,
                      PeerRateLimiter joinLimiter) {
        this.registry = registry;
        this.sessions = sessions;
        this.dataplane = dataplane;
        this.announcedAddress = announcedAddress;
        this.dropSimulator = new DropSimulatorControl(dataplane);
        this.joinLimiter = joinLimiter;
    }

    @Override
    public void join(JoinRequest request, StreamObserver<JoinResponse> observer) {
        Caller caller = Caller.current();
        // Per tenant where the caller has one (a local user, a certificate), so that one user of the switch's host
        // cannot spend another's; else per address.
        Object limited = caller.tenant() != null ? caller.tenant() : caller.peer();
        if (!caller.operator() && !joinLimiter.tryAcquire(limited)) {
            observer.onError(io.grpc.Status.RESOURCE_EXHAUSTED.withDescription("too many join requests from "
                    + (caller.tenant() != null ? "tenant " + caller.tenant() : caller.peer().getHostAddress())
                    + "; the controller takes a limited number per second from each tenant, retry in a second")
                    .asRuntimeException());
            return;
        }
        // A joining worker that dies while it waits no longer counts as arrived.
        onCancel(observer, registry.join(request, caller, reply(observer, job -> {
            JoinResponse.Builder b = JoinResponse.newBuilder().setJobNumber(job.number).setJobId(job.id)
                    .setSwitchAddress(announcedAddress)
                    .setSlotsPerThread(job.grant.slotsPerThread()).setAdmission(job.grant.reason())
                    .setOneRoundElements(job.oneRoundElements)
                    .setSkipZeroBlocks(job.parameters.getSkipZeroBlocks());
            for (int port : dataplane.ports()) {
                b.addSwitchPorts(port);
            }
            if (job.packetKeySalt != null) {
                b.setPacketKeySalt(ByteString.copyFrom(job.packetKeySalt));
            }
            if (LocalAddresses.isLocal(request.getAddress())) {
                dataplane.ipcOffer(job.number).ifPresent(offer -> b.setIpcDirectory(offer.directory())
                        .setIpcBoard(offer.board()).setIpcRank(request.getRank() - job.firstRank));
            }
            return b.build();
        })));
    }

    @Override
    public void watch(WatchRequest request, StreamObserver<JobEvent> observer) {
        onCancel(observer, registry.watch(request.getJobNumber(), request.getJobId(), request.getRank(),
                Caller.current(), new JobRegistry.Watcher() {
                    @Override
                    public void event(JobEvent event) {
                        quietly(() -> observer.onNext(event));
                    }

                    @Override
                    public void end() {
                        quietly(observer::onCompleted);
                    }

                    @Override
                    public void error(ControlException error) {
                        quietly(() -> observer.onError(error.status().asRuntimeException()));
                    }
                }));
    }

    @Override
    public void diagnose(DiagnoseRequest request, StreamObserver<DiagnoseResponse> observer) {
        observer.onNext(registry.diagnose(request.getJobNumber(), request.getJobId(), Caller.current()));
        observer.onCompleted();
    }

    @Override
    public void barrier(BarrierRequest request, StreamObserver<BarrierResponse> observer) {
        registry.meet(request.getJobNumber(), request.getJobId(), request.getRank(), request.getSequence(), -1, new byte[0],
                request.getTimeoutMs(), Caller.current(), reply(observer, v -> BarrierResponse.getDefaultInstance()));
    }

    @Override
    public void broadcast(BroadcastRequest request, StreamObserver<BroadcastResponse> observer) {
        registry.meet(request.getJobNumber(), request.getJobId(), request.getRank(), request.getSequence(),
                Integer.toUnsignedLong(request.getRoot()),
                request.getValue().toByteArray(), request.getTimeoutMs(), Caller.current(),
                reply(observer, v -> BroadcastResponse.newBuilder().setValue(com.google.protobuf.ByteString.copyFrom(v)).build()));
    }

    @Override
    public void leave(LeaveRequest request, StreamObserver<LeaveResponse> observer) {
        Caller caller = Caller.current();
        if (caller.mayEndAnyJob() && sessions.end(request.getJobNumber())) {
            observer.onNext(LeaveResponse.getDefaultInstance()); // the operator ends a SwitchML session
            observer.onCompleted();
            return;
        }
        if (caller.mayEndAnyJob() && request.getJobId() == 0 && !request.getRelayOnly()) {
            // No job id: not a rank leaving but the operator ending the job (`switchml ctl end-session NUMBER`).
            registry.endJob(request.getJobNumber(), caller, reply(observer, v -> LeaveResponse.getDefaultInstance()));
            return;
        }
        if (request.getRelayOnly()) {
            registry.relayLeft(request.getJobNumber(), request.getJobId(), request.getRank(), request.getRelayedRank(),
                    request.getOperations(), Caller.current(), reply(observer, v -> LeaveResponse.getDefaultInstance()));
            return;
        }
        registry.leave(request.getJobNumber(), request.getJobId(), request.getRank(), request.getOperations(),
                Caller.current(),
                reply(observer, v -> LeaveResponse.getDefaultInstance()));
    }

    @Override
    public void reportTransport(TransportReport request, StreamObserver<TransportReportResponse> observer) {
        registry.reportTransport(request.getJobNumber(), request.getJobId(), request.getRank(), request.getTransport(),
                Caller.current(), reply(observer, v -> TransportReportResponse.getDefaultInstance()));
    }

    @Override
    public void status(StatusRequest request, StreamObserver<StatusResponse> observer) {
        StatusResponse response = StatusResponse.newBuilder()
                .addAllJobs(registry.jobs())
                .addAllJobs(sessions.statuses())
                .addAllFormingJobs(registry.formingJobs())
                .putAllCounters(dataplane.counters())
                .setDropProbabilities(dropSimulator.current())
                .build();
        observer.onNext(response);
        observer.onCompleted();
    }

    @Override
    public void jobDetail(JobDetailRequest request, StreamObserver<JobDetailResponse> observer) {
        answer(observer, () -> registry.detail(request, Caller.current()));
    }

    @Override
    public void setDropProbabilities(SetDropProbabilitiesRequest request, StreamObserver<DropProbabilities> observer) {
        answer(observer, () -> dropSimulator.set(request));
    }

    @Override
    public void issueJobSecret(IssueJobSecretRequest request, StreamObserver<IssueJobSecretResponse> observer) {
        answer(observer, () -> IssueJobSecretResponse.newBuilder()
                .setSecret(registry.issueSecret(request.getJobName(), Caller.current())).build());
    }

    /** Answers a call at once with what {@code compute} returns, or with the status it refused it with. */
    private static <R> void answer(StreamObserver<R> observer, Supplier<R> compute) {
        R response;
        try {
            response = compute.get();
        } catch (ControlException e) {
            observer.onError(e.status().asRuntimeException());
            return;
        }
        observer.onNext(response);
        observer.onCompleted();
    }

    /**
     * Runs {@code action} if the client cancels the call or its connection breaks. Called from the
     * service method itself, which gRPC runs on the call's serializing executor: a cancellation is
     * delivered after it returns, so the handler is in place by then.
     */
    static void onCancel(StreamObserver<?> observer, Runnable action) {
        ServerCallStreamObserver<?> call = (ServerCallStreamObserver<?>) observer;
        if (call.isCancelled()) {
            action.run();
        } else {
            call.setOnCancelHandler(action);
        }
    }

    /** Sends on a stream whose call may have been cancelled meanwhile; there is nobody to tell then. */
    private static void quietly(Runnable send) {
        try {
            send.run();
        } catch (RuntimeException e) {
            // the call is cancelled or closed: the client is gone
        }
    }

    static <T, R> JobRegistry.Reply<T> reply(StreamObserver<R> observer, Function<T, R> toResponse) {
        return new JobRegistry.Reply<>() {
            @Override
            public void ok(T value) {
                observer.onNext(toResponse.apply(value));
                observer.onCompleted();
            }

            @Override
            public void error(ControlException error) {
                observer.onError(error.status().asRuntimeException());
            }
        };
    }
}
