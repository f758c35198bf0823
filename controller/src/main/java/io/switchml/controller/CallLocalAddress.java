package io.switchml.controller;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;

import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Makes the local address a call arrived at (the controller's address as the client reached it)
 * readable in the service method, through {@link #current()}.
 */
final class CallLocalAddress implements ServerInterceptor {
    private static final Context.Key<SocketAddress> KEY = Context.key("switchml-call-local-address");

    /** The current call's local address, or null outside a call or on a transport without one. */
    static InetSocketAddress current() {
        return KEY.get() instanceof InetSocketAddress address ? address : null;
    }

    private static final Context.Key<Integer> UID = Context.key("switchml-call-local-uid");

    /**
     * The tenant of the current call's caller where it is a user of the switch's host whom the kernel's socket table
     * named ({@link LocalUserFilter}): "uid 1001 (alice)"; null otherwise.
     */
    static String localTenant() {
        Integer uid = UID.get();
        return uid == null || uid == LocalUsers.UNKNOWN ? null : LocalUsers.tenant(uid);
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        Context context = Context.current().withValue(KEY, call.getAttributes().get(Grpc.TRANSPORT_ATTR_LOCAL_ADDR))
                .withValue(UID, call.getAttributes().get(LocalUserFilter.UID));
        return Contexts.interceptCall(context, call, headers, next);
    }
}
