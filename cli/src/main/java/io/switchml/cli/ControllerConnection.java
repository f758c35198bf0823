package io.switchml.cli;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.switchml.client.ControllerAddress;
import io.switchml.client.ControllerCredentials;
import io.switchml.controller.proto.ControllerGrpc;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The ctl command's connection to a switch's controller: every call has a deadline, so a switch
 * that is gone or does not answer ends the command instead of hanging it, and failures are put in
 * words.
 */
final class ControllerConnection implements AutoCloseable {
    private final ControllerAddress address;
    private final Duration deadline;
    private final ManagedChannel channel;

    ControllerConnection(ControllerAddress address, Duration deadline, ControllerCredentials credentials) {
        this.address = address;
        this.deadline = deadline;
        this.channel = credentials.channelBuilder(address).build();
    }

    /**
     * Runs one call.
     *
     * @param what what the call does, for the error message ("list the jobs")
     * @throws IllegalStateException when the controller cannot be reached, does not answer in time
     *                               or refuses the call, with the reason
     */
    <T> T call(String what, Function<ControllerGrpc.ControllerBlockingStub, T> rpc) {
        try {
            return rpc.apply(ControllerGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS));
        } catch (StatusRuntimeException e) {
            throw new IllegalStateException(describe(what, e.getStatus()), e);
        }
    }

    private String describe(String what, Status status) {
        return switch (status.getCode()) {
            case UNAVAILABLE -> "cannot " + what + ": cannot reach the controller at " + address + " ("
                    + rootMessage(status) + "); is `switchml switch` running there, with that --controller-port? If it serves TLS,"
                    + " do --tls-ca, --tls-cert and --tls-key match its certificates?";
            case DEADLINE_EXCEEDED -> "cannot " + what + ": the controller at " + address + " did not answer within "
                    + deadline.toMillis() + " ms";
            case UNAUTHENTICATED -> "cannot " + what + ": the controller at " + address + " refused our credentials: "
                    + status.getDescription();
            case PERMISSION_DENIED -> "cannot " + what + ": " + status.getDescription();
            case UNIMPLEMENTED -> "cannot " + what + ": the switch at " + address
                    + " does not know this request (an older version?)";
            default -> status.getDescription() != null ? status.getDescription()
                    : "cannot " + what + ": " + status.getCode();
        };
    }

    private static String rootMessage(Status status) {
        Throwable t = status.getCause();
        if (t == null) {
            return status.getDescription() != null ? status.getDescription() : status.getCode().toString();
        }
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
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
