package io.switchml.control;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.switchml.api.ControlPlaneException;
import io.switchml.controller.proto.ControllerGrpc;

import java.time.Duration;
import java.util.Locale;
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
    private final ControllerCredentials credentials;
    private final TlsSettingNames tlsNames;
    private final String silenceHint;
    private final boolean refusalsNameTheCall;

    private ControlChannel(ControllerAddress address, ManagedChannel channel, ControllerCredentials credentials,
                           TlsSettingNames tlsNames, String silenceHint, boolean refusalsNameTheCall) {
        this.address = address;
        this.channel = channel;
        this.credentials = credentials;
        this.tlsNames = tlsNames;
        this.silenceHint = silenceHint;
        this.refusalsNameTheCall = refusalsNameTheCall;
    }

    /**
     * Opens a channel.
     *
     * @param keepAlive   when not null, the connection is pinged this often while a call is open and closed
     *                    when a ping is not answered within the same time again (ends long-lived calls to a
     *                    controller host that vanished silently)
     * @param tlsNames    what this client calls its TLS files, for an error of the TLS handshake
     * @param silenceHint what to suggest when the controller does not answer in time ("" for nothing)
     * @param refusalsNameTheCall whether a refusal's message starts with the call ("cannot join job ...: reason",
     *                    for workers) or is the controller's reason alone (for a command whose name already says it)
     */
    public static ControlChannel open(ControllerAddress address, ControllerCredentials credentials, TlsSettingNames tlsNames,
                                      Duration keepAlive, String silenceHint, boolean refusalsNameTheCall) {
        ManagedChannelBuilder<?> builder = credentials.channelBuilder(address);
        if (keepAlive != null) {
            builder.keepAliveTime(keepAlive.toMillis(), TimeUnit.MILLISECONDS)
                    .keepAliveTimeout(keepAlive.toMillis() / 2, TimeUnit.MILLISECONDS);
        }
        return new ControlChannel(address, builder.build(), credentials, tlsNames, silenceHint, refusalsNameTheCall);
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

    /**
     * Whether a failed call found no controller to talk to: nothing listens at the address yet, or the
     * controller went away (a restart), as opposed to one that answered, refused the call or refused the
     * TLS handshake. Worth trying again while there is time.
     */
    public boolean nothingListening(ControlPlaneException failure) {
        Status status = Status.fromThrowable(failure.getCause());
        if (status.getCode() == Status.Code.CANCELLED) {
            return true; // the controller reset the call's stream: it is shutting down (a restart)
        }
        if (status.getCode() != Status.Code.UNAVAILABLE) {
            return false;
        }
        boolean tls = credentials.tlsCa() != null || credentials.tlsCert() != null;
        String causes = causes(status).toLowerCase(Locale.ROOT);
        return !(tls && (causes.contains("ssl") || causes.contains("certif") || causes.contains("pkix")
                || causes.contains("alert") || causes.contains("handshake")));
    }

    private String failure(String what, Duration deadline, Status status) {
        String reason = status.getDescription();
        String cannot = "cannot " + what + ": ";
        return switch (status.getCode()) {
            case UNAVAILABLE -> cannot + unreachable(status);
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

    /**
     * Why the controller could not be reached, in words. A refused TLS handshake reaches the client as
     * UNAVAILABLE with the TLS library's words deep in its causes (an alert, a certificate path, or only
     * a closed socket); those name the setting to change.
     */
    private String unreachable(Status status) {
        String root = rootMessage(status);
        String causes = causes(status).toLowerCase(Locale.ROOT);
        boolean tls = credentials.tlsCa() != null || credentials.tlsCert() != null;
        boolean presented = credentials.tlsCert() != null;
        String at = "the switch at " + address;
        if (tls && causes.contains("certificate_required")) {
            return at + " refused the TLS handshake: it requires a client certificate signed by its client CA (mutual"
                    + " TLS, the switch's --tls-client-ca), and this client presented none; set " + tlsNames.certificate()
                    + " and " + tlsNames.key() + " (`switchml certs` writes client.pem and client-key.pem)";
        }
        if (tls && (causes.contains("certpath") || causes.contains("pkix") || causes.contains("subject alternative")
                || causes.contains("no name matching"))) {
            return at + " presented a certificate this client does not trust (" + root + "): is it signed by the CA in "
                    + tlsNames.ca() + ", and does it name " + address.host() + " (its subjectAltName)?";
        }
        if (tls && presented && causes.contains("alert")) {
            return at + " refused the TLS handshake (" + root + "): it did not accept the client certificate in "
                    + tlsNames.certificate() + "; is it signed by the CA the switch trusts for clients (its --tls-client-ca)?";
        }
        if (tls && !presented && (causes.contains("ssl") || causes.contains("socket closed")
                || causes.contains("connection reset"))) {
            return at + " closed the connection during the TLS handshake (" + root + "); if it requires a client"
                    + " certificate (mutual TLS), set " + tlsNames.certificate() + " and " + tlsNames.key()
                    + " to one signed by its client CA";
        }
        return "cannot reach the controller at " + address + " (" + root + "); is `switchml switch` running there, with"
                + " that controller port? " + (tls ? "If it serves TLS, do " + tlsNames.ca() + ", " + tlsNames.certificate()
                + " and " + tlsNames.key() + " match its certificates?" : "If it serves TLS, set " + tlsNames.ca()
                + " (and " + tlsNames.certificate() + " and " + tlsNames.key() + " if it requires client certificates).");
    }

    /** The class names and messages of the status's causes, one after the other. */
    private static String causes(Status status) {
        StringBuilder all = new StringBuilder(String.valueOf(status.getDescription()));
        for (Throwable t = status.getCause(); t != null; t = t.getCause()) {
            all.append(' ').append(t.getClass().getName()).append(": ").append(t.getMessage());
        }
        return all.toString();
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
