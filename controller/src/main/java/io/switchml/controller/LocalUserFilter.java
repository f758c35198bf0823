package io.switchml.controller;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ServerTransportFilter;

import java.net.InetSocketAddress;

/**
 * Looks up, once per connection as it becomes ready, which local user owns the connection's other end
 * ({@link LocalUsers}) and keeps it in the transport's attributes, where {@link ControllerAuthenticator}
 * reads it for every call of the connection.
 */
final class LocalUserFilter extends ServerTransportFilter {
    /** The uid owning the caller's socket, or {@link LocalUsers#UNKNOWN}; absent for callers from other hosts. */
    static final Attributes.Key<Integer> UID = Attributes.Key.create("switchml-local-uid");

    @Override
    public Attributes transportReady(Attributes attributes) {
        if (attributes.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR) instanceof InetSocketAddress peer
                && LocalUsers.isLocal(peer.getAddress())) {
            int uid = attributes.get(Grpc.TRANSPORT_ATTR_LOCAL_ADDR) instanceof InetSocketAddress local
                    ? LocalUsers.uidOf(peer, local) : LocalUsers.UNKNOWN;
            return attributes.toBuilder().set(UID, uid).build();
        }
        return attributes;
    }
}
