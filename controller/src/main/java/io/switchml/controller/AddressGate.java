package io.switchml.controller;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Lets a call through only from the peer addresses a rule allows, and tells everyone else what to change: protected
 * mode for the control plane ({@link #protectedMode}) and the {@code --switchml-sessions} list for SwitchML's own
 * protocol, which carries no credentials ({@link #switchmlSessions}).
 */
final class AddressGate implements ServerInterceptor {
    private final Predicate<InetAddress> allows;
    /** The refusal's text, given who was refused ("this peer" when the address is unknown). */
    private final Function<String, String> refusal;

    private AddressGate(Predicate<InetAddress> allows, Function<String, String> refusal) {
        this.allows = allows;
        this.refusal = refusal;
    }

    /**
     * Protected mode (docs/security.md): a switch without credentials takes control-plane calls from its own host only,
     * unless its operator named the networks it trusts, as Redis does.
     */
    static AddressGate protectedMode(ControllerSecurity security) {
        return new AddressGate(security::trusts, who -> security.credentials()
                ? "control-plane calls from " + who + " are not taken by this switch (--trusted-networks "
                + security.trustedNetworksText() + "); add its subnet to --trusted-networks"
                : "this switch has no credentials (no --operator-token-file, no --tls-client-ca), so it takes control-plane"
                + " calls from its own host only (protected mode); start it with --trusted-networks SUBNET,... (or on) to"
                + " take them from " + who + ", or give it credentials (docs/security.md)");
    }

    /** SwitchML's services, for the peers the {@link NetworkPolicy} allows: the address is all there is to check. */
    static AddressGate switchmlSessions(NetworkPolicy policy) {
        return new AddressGate(policy::allows, who -> policy.off()
                ? "SwitchML sessions are off on this switch (it was started with --switchml-sessions off); use this"
                + " project's workers, or restart the switch with --switchml-sessions on or a list of subnets"
                : "SwitchML sessions from " + who + " are not allowed on this switch (--switchml-sessions " + policy
                + "); add its subnet to --switchml-sessions");
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        InetAddress peer = ControlSocket.peerAddress(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        if (allows.test(peer)) {
            return next.startCall(call, headers);
        }
        call.close(Status.PERMISSION_DENIED.withDescription(refusal.apply(peer == null ? "this peer" : peer.getHostAddress())),
                new Metadata());
        return new ServerCall.Listener<>() { };
    }
}
