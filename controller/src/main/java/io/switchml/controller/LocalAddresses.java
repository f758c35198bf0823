package io.switchml.controller;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;

/**
 * Whether a worker's address belongs to the switch's own host (its network namespace), in which case
 * the worker may use the switch's shared-memory port (docs/ARCHITECTURE.md section 11). A worker in
 * another container of the host can have a local address and still not see the switch's files: it
 * then falls back to UDP itself.
 */
final class LocalAddresses {
    private LocalAddresses() {
    }

    /** {@code address}: a literal IPv4 or IPv6 address, as a worker registers it (never resolved by name). */
    static boolean isLocal(String address) {
        if (address == null || address.isEmpty() || !Character.isDigit(address.charAt(0)) && address.indexOf(':') < 0) {
            return false;
        }
        try {
            InetAddress ip = InetAddress.getByName(address);
            return ip.isLoopbackAddress() || NetworkInterface.getByInetAddress(ip) != null;
        } catch (UnknownHostException | SocketException e) {
            return false;
        }
    }
}
