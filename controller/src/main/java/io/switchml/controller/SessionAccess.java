package io.switchml.controller;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

import java.net.InetSocketAddress;

/**
 * Lets only the peers that the {@link NetworkPolicy} allows reach SwitchML's services: that protocol
 * carries no credentials, so its address is all there is to check.
 */
final class SessionAccess implements ServerInterceptor {
    private final NetworkPolicy policy;

    SessionAccess(NetworkPolicy policy) {
        this.policy = policy;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        InetSocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR) instanceof InetSocketAddress a
                ? a : null;
        if (!policy.allows(remote == null ? null : remote.getAddress())) {
            String who = remote == null ? "this peer" : remote.getAddress().getHostAddress();
            call.close(Status.PERMISSION_DENIED.withDescription(policy.off()
                    ? "SwitchML sessions are off on this switch (it was started with --switchml-sessions off); use this"
                    + " project's workers, or restart the switch with --switchml-sessions on or a list of subnets"
                    : "SwitchML sessions from " + who + " are not allowed on this switch (--switchml-sessions " + policy
                    + "); add its subnet to --switchml-sessions"), new Metadata());
            return new ServerCall.Listener<>() { };
        }
        return next.startCall(call, headers);
    }
}
