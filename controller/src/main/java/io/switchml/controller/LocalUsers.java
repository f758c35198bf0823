package io.switchml.controller;

import io.switchml.control.JobNames;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which user of the switch's own host made a TCP connection to the controller, by the kernel's word
 * (docs/security.md, "Local users are tenants"): the connection's other end is a socket of this host, and
 * the kernel's socket table ({@code /proc/net/tcp} and {@code /proc/net/tcp6}) records the uid that owns it.
 * The switch looks the socket up by its address and port as the connection was accepted, so what a caller
 * says (its address, its headers) plays no part. Where the table has no such socket (no {@code /proc}, a
 * socket gone before the lookup), the caller is {@link #UNKNOWN}.
 */
final class LocalUsers {
    /** No uid: not a local caller, or one the kernel's table did not show. */
    static final int UNKNOWN = -1;
    static final List<Path> KERNEL_TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));
    /** The kernel's tables; a test points this elsewhere to see a caller the table does not show. */
    static volatile List<Path> tables = KERNEL_TABLES;
    private static final Map<Integer, String> NAMES = new ConcurrentHashMap<>();

    private LocalUsers() {
    }

    /** Whether {@code peer} is an address of this host (loopback or one of its interfaces'). */
    static boolean isLocal(InetAddress peer) {
        if (peer == null) {
            return false;
        }
        if (peer.isLoopbackAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(peer) != null;
        } catch (SocketException e) {
            return false;
        }
    }

    /**
     * The uid owning the socket at {@code peer} connected to {@code local} (the controller's end), or
     * {@link #UNKNOWN}.
     */
    static int uidOf(InetSocketAddress peer, InetSocketAddress local) {
        if (peer == null || local == null || !isLocal(peer.getAddress())) {
            return UNKNOWN;
        }
        for (Path table : tables) {
            // Read as a stream and stopped at the row: a host with many sockets has a long table.
            try (java.util.stream.Stream<String> lines = Files.lines(table)) {
                int uid = lines.skip(1).mapToInt(line -> row(line, peer, local)).filter(u -> u != UNKNOWN).findFirst()
                        .orElse(UNKNOWN);
                if (uid != UNKNOWN) {
                    return uid;
                }
            } catch (IOException | RuntimeException e) {
                // no such table (no /proc, no IPv6): the other may have it
            }
        }
        return UNKNOWN;
    }

    /**
     * The uid of the row of a {@code /proc/net/tcp}-format table whose local end is {@code peer} and whose
     * remote end is {@code local}, or {@link #UNKNOWN}. Package-private for its test.
     */
    static int find(List<String> lines, InetSocketAddress peer, InetSocketAddress local) {
        for (int i = 1; i < lines.size(); i++) {
            int uid = row(lines.get(i), peer, local);
            if (uid != UNKNOWN) {
                return uid;
            }
        }
        return UNKNOWN;
    }

    /** The uid of this row if its local end is {@code peer} and its remote end {@code local}, else {@link #UNKNOWN}. */
    private static int row(String line, InetSocketAddress peer, InetSocketAddress local) {
        String[] f = line.trim().split("\\s+");
        if (f.length < 8 || !same(f[1], peer) || !same(f[2], local)) {
            return UNKNOWN;
        }
        return Integer.parseInt(f[7]);
    }

    /** Whether a table's {@code HEXADDRESS:HEXPORT} is this address and port (an IPv4-mapped IPv6 one as IPv4). */
    private static boolean same(String field, InetSocketAddress address) {
        int colon = field.indexOf(':');
        if (colon < 0 || Integer.parseInt(field.substring(colon + 1), 16) != address.getPort()) {
            return false;
        }
        InetAddress parsed = address(field.substring(0, colon));
        return parsed != null && parsed.equals(address.getAddress());
    }

    /** The kernel writes each 32-bit word of the address in the host's byte order. */
    static InetAddress address(String hex) {
        if (hex.length() != 8 && hex.length() != 32) {
            return null;
        }
        byte[] bytes = new byte[hex.length() / 2];
        boolean little = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
        for (int word = 0; word < bytes.length / 4; word++) {
            for (int b = 0; b < 4; b++) {
                int at = word * 8 + b * 2;
                int value = Integer.parseInt(hex.substring(at, at + 2), 16);
                bytes[word * 4 + (little ? 3 - b : b)] = (byte) value;
            }
        }
        try {
            return InetAddress.getByAddress(bytes); // an IPv4-mapped IPv6 address comes back as IPv4
        } catch (UnknownHostException e) {
            return null;
        }
    }

    /** The switch's own uid (the owner of this process), or {@link #UNKNOWN}. */
    static int self() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | RuntimeException e) {
            return UNKNOWN;
        }
    }

    /** "uid 1001 (alice)": the tenant of a local user, named from /etc/passwd where it has the uid. */
    static String tenant(int uid) {
        return "uid " + uid + NAMES.computeIfAbsent(uid, LocalUsers::name);
    }

    private static String name(int uid) {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] f = line.split(":", -1);
                if (f.length > 2 && f[2].equals(Integer.toString(uid)) && JobNames.problem(f[0]) == null
                        && f[0].length() <= 32) {
                    return " (" + f[0] + ")";
                }
            }
        } catch (IOException | RuntimeException e) {
            // no names: the number alone
        }
        return "";
    }
}
