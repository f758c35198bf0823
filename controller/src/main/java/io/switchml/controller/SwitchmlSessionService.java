package io.switchml.controller;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.switchml.controller.compat.proto.RdmaSessionRequest;
import io.switchml.controller.compat.proto.RdmaSessionResponse;
import io.switchml.controller.compat.proto.SessionGrpc;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.controller.compat.proto.UdpSessionResponse;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.protocol.Ipv4Addresses;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The gRPC face of SwitchML's session setup: registers each UdpSession call with
 * {@link SwitchmlSessions} and answers at once with where the switch is, as SwitchML's controller
 * does (its rank 0 registers alone, so a call that waited for the other ranks would never return). Its MAC is reported as 0: a software switch behind the
 * host's network stack has none of its own, and SwitchML's UDP workers address it by IP.
 */
final class SwitchmlSessionService extends SessionGrpc.SessionImplBase {
    /** The MAC address a software switch reports. */
    static final long SWITCH_MAC = 0;

    private final SwitchmlSessions sessions;
    private final AggregationSwitch dataplane;

    SwitchmlSessionService(SwitchmlSessions sessions, AggregationSwitch dataplane) {
        this.sessions = sessions;
        this.dataplane = dataplane;
    }

    @Override
    public void udpSession(UdpSessionRequest request, StreamObserver<UdpSessionResponse> observer) {
        InetAddress switchAddress = switchAddress();
        if (!(switchAddress instanceof Inet4Address)) {
            observer.onError(Status.FAILED_PRECONDITION.withDescription("the switch listens on every address and this"
                    + " call did not reach the controller over IPv4, so there is no IPv4 address to give SwitchML workers;"
                    + " start the switch with --bind <its IPv4 address>").asRuntimeException());
            return;
        }
        try {
            sessions.register(request, CallLocalAddress.localTenant());
        } catch (ControlException e) {
            observer.onError(e.status().asRuntimeException());
            return;
        }
        observer.onNext(UdpSessionResponse.newBuilder().setSessionId(request.getSessionId()).setMac(SWITCH_MAC)
                .setIpv4(ipv4Bits(switchAddress)).build());
        observer.onCompleted();
    }

    @Override
    public void rdmaSession(RdmaSessionRequest request, StreamObserver<RdmaSessionResponse> observer) {
        observer.onError(Status.UNIMPLEMENTED.withDescription("RdmaSession: this switch serves only SwitchML's UDP"
                + " flavour; run SwitchML's workers with the DPDK backend, whose workers set up their session with"
                + " UdpSession").asRuntimeException());
    }

    /** The dataplane's bound address; when that is the wildcard, the address this call reached. */
    private InetAddress switchAddress() {
        if (!dataplane.bindAddress().isAnyLocalAddress()) {
            return dataplane.bindAddress();
        }
        InetSocketAddress local = CallLocalAddress.current();
        return local == null ? null : local.getAddress();
    }

    private static int ipv4Bits(InetAddress address) {
        return Ipv4Addresses.toInt(address.getAddress());
    }
}
