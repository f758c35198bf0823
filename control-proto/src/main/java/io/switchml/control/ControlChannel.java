package io.switchml.control;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.switchml.api.ControlPlaneException;
import io.switchml.controller.proto.ControllerGrpc;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A gRPC channel to one switch's controller, shared by workers and {@code switchml ctl}: every call
 * has a deadline, so a controller that is gone or silent ends the call instead of hanging it, and a
 * failed call becomes a {@link ControlPlaneException} that says in words what went wrong.
 */
public final class ControlChannel implements AutoCloseable {
    private final ControllerAddress address;
    private final ManagedChannel channel;
    private final String silenceHint;
    private final boolean refusalsNameTheCall;

    private ControlChannel(ControllerAddress address, ManagedChannel channel, String silenceHint,
                           boolean refusalsNameTheCall) {
        this.address = address;
        this.channel = channel;
        this.silenceHint = silenceHint;
        this.refusalsNameTheCall = refusalsNameTheCall;
    }

    /**
     * Opens a channel.
     *
     * @param keepAlive   when not null, the connection is pinged this often while a call is open and closed
     *                    when a ping is not answered within the same time again (ends long-lived calls to a
     *                    controller host that vanished silently)
     * @param silenceHint what to suggest when the controller does not answer in time ("" for nothing)
     * @param refusalsNameTheCall whether a refusal's message starts with the call ("cannot join job ...: reason",
     *                    for workers) or is the controller's reason alone (for a command whose name already says it)
     */
    public static ControlChannel open(ControllerAddress address, ControllerCredentials credentials, Duration keepAlive,
                                      String silenceHint, boolean refusalsNameTheCall) {
        ManagedChannelBuilder<?> builder = credentials.channelBuilder(address);
        if (keepAlive != null) {
            builder.keepAliveTime(keepAlive.toMillis(), TimeUnit.MILLISECONDS)
                    .keepAliveTimeout(keepAlive.toMillis() / 2, TimeUnit.MILLISECONDS);
        }
        return new ControlChannel(address, builder.build(), silenceHint, refusalsNameTheCall);
    }

    public ControllerAddress address() {
        return address;
    }

    /** For streaming calls, which do not go through {@link #call}. */
    public ManagedChannel channel() {
        return channel;
    }

    /**
     * Runs one blocking call with {@code deadline}.
     *
     * @param what what the call does, for the error message ("list the jobs")
     * @throws ControlPlaneException when the controller cannot be reached, does not answer in time or
     *                               refuses the call, with the reason
     */
    public <T> T call(String what, Duration deadline, Function<ControllerGrpc.ControllerBlockingStub, T> rpc) {
        try {
            return rpc.apply(ControllerGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS));
        } catch (StatusRuntimeException e) {
            throw new ControlPlaneException(failure(what, deadline, e.getStatus()), e);
        }
    }

    private String failure(String what, Duration deadline, Status status) {
        String reason = status.getDescription();
        String cannot = "cannot " + what + ": ";
        return switch (status.getCode()) {
            case UNAVAILABLE -> cannot + "cannot reach the controller at " + address + " (" + rootMessage(status)
                    + "); is `switchml switch` running there, with that controller port? If it serves TLS,"
                    + " do the CA, certificate and key match its certificates?";
            // The controller ends a wait it enforces itself with its own reason; gRPC's own says "deadline exceeded".
            case DEADLINE_EXCEEDED -> reason != null && !reason.startsWith("deadline exceeded")
                    ? cannot + reason
                    : cannot + "no answer from the controller at " + address + " within " + deadline.toMillis() + " ms"
                    + (silenceHint.isEmpty() ? "" : " (" + silenceHint + ")");
            case UNAUTHENTICATED -> cannot + "the controller at " + address + " refused our credentials: " + reason;
            case PERMISSION_DENIED -> cannot + reason;
            case UNIMPLEMENTED -> cannot + "the controller at " + address
                    + " does not know this request (an older version?)";
            default -> reason == null ? cannot + status.getCode() : refusalsNameTheCall ? cannot + reason : reason;
        };
    }

    /** A gRPC failure in words: its status code and description. */
    public static String describe(Throwable error) {
        Status status = Status.fromThrowable(error);
        return status.getCode() + (status.getDescription() != null ? ": " + status.getDescription() : "");
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
