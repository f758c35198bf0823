package io.switchml.client;

import com.google.protobuf.ByteString;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.switchml.api.ControlPlaneException;
import io.switchml.control.ControlChannel;
import io.switchml.control.ControllerAddress;
import io.switchml.control.ControllerCredentials;
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
import io.switchml.controller.proto.TransportReport;
import io.switchml.controller.proto.WorkerTransport;
import io.switchml.controller.proto.WatchRequest;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's connection to the controller: join, barrier, broadcast, leave, each with a deadline;
 * the rank's watch (its liveness stream); and the diagnosis of a stalled job.
 */
final class ControlPlaneClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlPlaneClient.class);
    /** Extra time granted to an RPC beyond the wait the controller itself enforces. */
    private static final long RPC_SLACK_MS = 5_000;
    /**
     * HTTP/2 keepalive: the connection is pinged this often while a call (the watch) is open, and
     * closed when a ping is not answered in half that, which ends the watch: a controller host that
     * vanishes silently is noticed within about 15 s (10 s is gRPC's minimum; the controller permits
     * it). A controller process that dies is seen at once.
     */
    static final int KEEPALIVE_TIME_SECONDS = 10;
    /** A worker's TLS settings, named in the error of a refused handshake. */
    private static final TlsSettingNames WORKER_TLS = new TlsSettingNames(SwitchMLConfig.Key.TLS_CA.property(),
            SwitchMLConfig.Key.TLS_CERT.property(), SwitchMLConfig.Key.TLS_KEY.property());

    /** Where a watch's events go; called on a gRPC thread. */
    interface WatchListener {
        void event(JobEvent event);

        /** The watch ended: normally (null), or with the error that broke it. */
        void ended(Throwable error);
    }

    private final ControlChannel channel;

    ControlPlaneClient(ControllerAddress address, ControllerCredentials credentials) {
        this.channel = ControlChannel.open(address, credentials, WORKER_TLS, Duration.ofSeconds(KEEPALIVE_TIME_SECONDS),
                "are all workers started?", true);
    }

    ControllerAddress address() {
        return channel.address();
    }

    /** @param waitForController whether to keep trying while no controller listens (see {@link #untilReachable}) */
    JoinResponse join(String job, int rank, JobParameters parameters, String localAddress, List<Integer> ports,
                      Duration timeout, boolean waitForController) {
        JoinRequest request = JoinRequest.newBuilder()
                .setJobName(job).setRank(rank).setParameters(parameters)
                .setAddress(localAddress).addAllPorts(ports)
                .setTimeoutMs((int) timeout.toMillis())
                .setWatch(true)
                .build();
        String what = "join job '" + job + "' as rank " + rank;
        Function<Duration, JoinResponse> attempt = left -> call(what, left,
                stub -> stub.join(request.toBuilder().setTimeoutMs((int) left.toMillis()).build()));
        return waitForController ? untilReachable(what, timeout, attempt) : attempt.apply(timeout);
    }

    /**
     * Runs {@code attempt} with the time left of {@code timeout}, again (backing off from 100 ms to 2 s)
     * while no controller listens at the address: a worker may start before its switch, and a switch that
     * restarts before the job formed is joined again. Says once what it waits for. A controller that
     * answers, refuses or fails the TLS handshake ends it at once.
     */
    private <T> T untilReachable(String what, Duration timeout, Function<Duration, T> attempt) {
        long end = System.nanoTime() + timeout.toNanos();
        long backoffMs = 100;
        boolean told = false;
        while (true) {
            Duration left = Duration.ofNanos(Math.max(1_000_000, end - System.nanoTime()));
            try {
                return attempt.apply(left);
            } catch (ControlPlaneException e) {
                if (!channel.nothingListening(e) || left.toMillis() <= backoffMs) {
                    throw e;
                }
                if (!told) {
                    told = true;
                    LOG.info("waiting for the controller at {} to {}: {}; trying again for up to {} s (switchml.joinTimeoutMs)",
                            channel.address(), what, e.getMessage(), left.toSeconds());
                }
            }
            try {
                Thread.sleep(backoffMs);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new ControlPlaneException("interrupted while waiting for the controller at " + channel.address()
                        + " to " + what, interrupted);
            }
            backoffMs = Math.min(2_000, backoffMs * 2);
        }
    }

    void barrier(int jobNumber, long jobId, int rank, long sequence, Duration timeout) {
        BarrierRequest request = BarrierRequest.newBuilder()
                .setJobNumber(jobNumber).setJobId(jobId).setRank(rank).setSequence(sequence)
                .setTimeoutMs((int) timeout.toMillis()).build();
        call("barrier " + sequence + " of job " + jobNumber, timeout, stub -> stub.barrier(request));
    }

    byte[] broadcast(int jobNumber, long jobId, int rank, int root, long sequence, byte[] value, Duration timeout) {
        BroadcastRequest request = BroadcastRequest.newBuilder()
                .setJobNumber(jobNumber).setJobId(jobId).setRank(rank).setRoot(root).setSequence(sequence)
                .setValue(ByteString.copyFrom(value)).setTimeoutMs((int) timeout.toMillis()).build();
        return call("broadcast " + sequence + " from root " + root + " in job " + jobNumber, timeout,
                stub -> stub.broadcast(request)).getValue().toByteArray();
    }

    /** @param operations the all-reduces this rank finished in order (see {@code LeaveRequest.operations}) */
    void leave(int jobNumber, long jobId, int rank, long operations) {
        LeaveRequest request = LeaveRequest.newBuilder().setJobNumber(jobNumber).setJobId(jobId).setRank(rank)
                .setOperations(operations).build();
        Duration timeout = Duration.ofSeconds(5);
        call("leave job " + jobNumber, timeout, stub -> stub.leave(request));
    }

    /** Opens the rank's watch; returns what cancels it. */
    Runnable watch(int jobNumber, long jobId, int rank, WatchListener listener) {
        WatchRequest request = WatchRequest.newBuilder().setJobNumber(jobNumber).setJobId(jobId).setRank(rank).build();
        CompletableFuture<ClientCallStreamObserver<WatchRequest>> call = new CompletableFuture<>();
        ControllerGrpc.newStub(channel.channel()).watch(request, new ClientResponseObserver<WatchRequest, JobEvent>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
                call.complete(requestStream);
            }

            @Override
            public void onNext(JobEvent event) {
                listener.event(event);
            }

            @Override
            public void onError(Throwable t) {
                listener.ended(t);
            }

            @Override
            public void onCompleted() {
                listener.ended(null);
            }
        });
        return () -> call.thenAccept(c -> c.cancel("the rank closed its context", null));
    }

    /** Asks what the controller and the switch know about a stalled job; fails after {@code deadline}. */
    CompletableFuture<DiagnoseResponse> diagnose(int jobNumber, long jobId, Duration deadline) {
        CompletableFuture<DiagnoseResponse> answer = new CompletableFuture<>();
        ControllerGrpc.newStub(channel.channel()).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                .diagnose(DiagnoseRequest.newBuilder().setJobNumber(jobNumber).setJobId(jobId).build(),
                        completing(answer, v -> v, DiagnoseResponse.getDefaultInstance()));
        return answer;
    }

    /** Sends the rank's transport state; fire and forget (the next report follows), failing after {@code deadline}. */
    CompletableFuture<Void> reportTransport(int jobNumber, long jobId, int rank, WorkerTransport transport,
                                            Duration deadline) {
        CompletableFuture<Void> answer = new CompletableFuture<>();
        ControllerGrpc.newStub(channel.channel()).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                .reportTransport(TransportReport.newBuilder().setJobNumber(jobNumber).setJobId(jobId).setRank(rank)
                        .setTransport(transport).build(), completing(answer, v -> null, null));
        return answer;
    }

    /**
     * An observer of a unary call that completes {@code answer} with the response (mapped), with the
     * error, or with {@code empty} when the call ends without one (a no-op once answered).
     */
    private static <R, T> StreamObserver<R> completing(CompletableFuture<T> answer, Function<R, T> value, T empty) {
        return new StreamObserver<>() {
            @Override
            public void onNext(R response) {
                answer.complete(value.apply(response));
            }

            @Override
            public void onError(Throwable t) {
                answer.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                answer.complete(empty);
            }
        };
    }

    /** A call of the worker's: the controller's own wait plus slack, so the controller's answer comes first. */
    private <T> T call(String what, Duration wait, Function<ControllerGrpc.ControllerBlockingStub, T> rpc) {
        return channel.call(what, wait.plusMillis(RPC_SLACK_MS), rpc);
    }

    @Override
    public void close() {
        channel.close();
    }
}
