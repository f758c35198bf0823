package io.switchml.client;

import io.switchml.api.SwitchMLException;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;

/** Names to IPv4 addresses, and which local address and link the kernel uses toward a peer. */
final class Routes {
    private Routes() {
    }

    /** The first IPv4 address of {@code host}. */
    static InetAddress resolveIpv4(String host) {
        try {
            for (InetAddress a : InetAddress.getAllByName(host)) {
                if (a instanceof Inet4Address) {
                    return a;
                }
            }
        } catch (UnknownHostException e) {
            throw new SwitchMLException("cannot resolve host '" + host + "': " + e.getMessage(), e);
        }
        throw new SwitchMLException("host '" + host + "' has no IPv4 address; the switch speaks UDP over IPv4");
    }

    /** The address the workers' sockets bind to: {@code localAddress}, or the one that routes to {@code peer}. */
    static InetAddress localAddress(SwitchMLConfig config, InetAddress peer) {
        return config.localAddress().isEmpty() ? routeTo(peer) : resolveIpv4(config.localAddress());
    }

    /** The local IPv4 address the kernel would use to reach {@code target}. */
    static InetAddress routeTo(InetAddress target) {
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(target, 9); // connecting a UDP socket sends nothing; it only picks a route
            InetAddress local = probe.getLocalAddress();
            return local.isAnyLocalAddress() ? InetAddress.getLoopbackAddress() : local;
        } catch (IOException e) {
            throw new SwitchMLException("no route to " + target.getHostAddress() + ": " + e.getMessage(), e);
        }
    }

    /**
     * The MTU of the path from {@code local} toward {@code peer}: loopback's when the peer is a
     * loopback address, else that of the interface holding {@code local}; -1 when it cannot be told.
     * (A peer that is another local address also goes over loopback, but then workers on other hosts
     * would choose other sizes than this one, so the interface's MTU is what the job can agree on.)
     */
    static int mtu(InetAddress local, InetAddress peer) {
        try {
            NetworkInterface link = NetworkInterface.getByInetAddress(peer.isLoopbackAddress() ? peer : local);
            return link != null ? link.getMTU() : -1;
        } catch (SocketException e) {
            return -1;
        }
    }
}
