package io.switchml.client;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.switchml.controller.proto.BarrierRequest;
import io.switchml.controller.proto.BroadcastRequest;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.LeaveRequest;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A worker's connection to the controller: join, barrier, broadcast, leave, each with a deadline. */
final class ControlPlaneClient implements AutoCloseable {
    /** Extra time granted to an RPC beyond the wait the controller itself enforces. */
    private static final long RPC_SLACK_MS = 5_000;

    private final ControllerAddress address;
    private final ManagedChannel channel;
    private final ControllerGrpc.ControllerBlockingStub stub;

    ControlPlaneClient(ControllerAddress address) {
        this.address = address;
        this.channel = ManagedChannelBuilder.forAddress(address.host(), address.port()).usePlaintext().build();
        this.stub = ControllerGrpc.newBlockingStub(channel);
    }

    ControllerAddress address() {
        return address;
    }

    JoinResponse join(String job, int rank, JobParameters parameters, String localAddress, List<Integer> ports,
                      Duration timeout) {
        JoinRequest request = JoinRequest.newBuilder()
                .setJobName(job).setRank(rank).setParameters(parameters)
                .setAddress(localAddress).addAllPorts(ports)
                .setTimeoutMs((int) timeout.toMillis())
                .build();
        return call("join job '" + job + "' as rank " + rank, timeout,
                () -> withDeadline(timeout).join(request));
    }

    void barrier(int jobNumber, int rank, long sequence, Duration timeout) {
        BarrierRequest request = BarrierRequest.newBuilder()
                .setJobNumber(jobNumber).setRank(rank).setSequence(sequence)
                .setTimeoutMs((int) timeout.toMillis()).build();
        call("barrier " + sequence + " of job " + jobNumber, timeout, () -> withDeadline(timeout).barrier(request));
    }

    byte[] broadcast(int jobNumber, int rank, int root, long sequence, byte[] value, Duration timeout) {
        BroadcastRequest request = BroadcastRequest.newBuilder()
                .setJobNumber(jobNumber).setRank(rank).setRoot(root).setSequence(sequence)
                .setValue(ByteString.copyFrom(value)).setTimeoutMs((int) timeout.toMillis()).build();
        return call("broadcast " + sequence + " from root " + root + " in job " + jobNumber, timeout,
                () -> withDeadline(timeout).broadcast(request)).getValue().toByteArray();
    }

    void leave(int jobNumber, int rank) {
        LeaveRequest request = LeaveRequest.newBuilder().setJobNumber(jobNumber).setRank(rank).build();
        Duration timeout = Duration.ofSeconds(5);
        call("leave job " + jobNumber, timeout, () -> withDeadline(timeout).leave(request));
    }

    private ControllerGrpc.ControllerBlockingStub withDeadline(Duration wait) {
        return stub.withDeadlineAfter(wait.toMillis() + RPC_SLACK_MS, TimeUnit.MILLISECONDS);
    }

    private <T> T call(String what, Duration timeout, java.util.function.Supplier<T> rpc) {
        try {
            return rpc.get();
        } catch (StatusRuntimeException e) {
            Status status = e.getStatus();
            String detail = status.getDescription() != null ? status.getDescription() : status.getCode().toString();
            switch (status.getCode()) {
                case UNAVAILABLE:
                    throw new ControlPlaneException("cannot " + what + ": the controller at " + address
                            + " is unreachable (" + detail + "); is `switchml switch` running there?", e);
                case DEADLINE_EXCEEDED:
                    if (status.getDescription() != null && !status.getDescription().startsWith("deadline exceeded")) {
                        throw new ControlPlaneException("cannot " + what + ": " + detail, e); // the controller's own reason
                    }
                    throw new ControlPlaneException("cannot " + what + ": no answer from the controller at " + address
                            + " within " + timeout.toMillis() + " ms (are all workers started?)", e);
                default:
                    throw new ControlPlaneException("cannot " + what + ": " + detail, e);
            }
        }
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
