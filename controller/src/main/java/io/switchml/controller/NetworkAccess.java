package io.switchml.controller;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * Protected mode (docs/security.md): a switch without credentials takes control-plane calls from its
 * own host only, unless its operator named the networks it trusts, as Redis does; everyone else is
 * told what to change.
 */
final class NetworkAccess implements ServerInterceptor {
    private final ControllerSecurity security;

    NetworkAccess(ControllerSecurity security) {
        this.security = security;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        InetAddress peer = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR) instanceof InetSocketAddress a
                ? a.getAddress() : null;
        if (security.trusts(peer)) {
            return next.startCall(call, headers);
        }
        String who = peer == null ? "this peer" : peer.getHostAddress();
        call.close(Status.PERMISSION_DENIED.withDescription(security.credentials()
                ? "control-plane calls from " + who + " are not taken by this switch (--trusted-networks "
                + security.trustedNetworksText() + "); add its subnet to --trusted-networks"
                : "this switch has no credentials (no --operator-token-file, no --tls-client-ca), so it takes control-plane"
                + " calls from its own host only (protected mode); start it with --trusted-networks SUBNET,... (or on) to"
                + " take them from " + who + ", or give it credentials (docs/security.md)"), new Metadata());
        return new ServerCall.Listener<>() { };
    }
}
