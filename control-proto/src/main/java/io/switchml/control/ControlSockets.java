package io.switchml.control;

import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A switch's Unix-domain control socket (docs/security.md, "Local users are tenants"): where a switch of uid U with
 * controller port P listens ({@code /dev/shm/switchml-control-U/controller-NETNS-P.sock}, in a directory of U's that
 * nobody else may write), and the channel a client of the same host uses to reach it, so that the switch reads the
 * client's uid from the kernel. A client trusts the socket only when the kernel's socket table says that U listens
 * on TCP port P of this host and the directory and the socket are U's: a socket that another user planted for a
 * port cannot receive the clients' secrets. Anything else, and the client uses TCP as before.
 */
public final class ControlSockets {
    /** Set {@code -Dswitchml.controlSocket=false} to always use TCP. */
    public static final String PROPERTY = "switchml.controlSocket";
    private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));
    private static EventLoopGroup group;

    static {
        NettyLogFilter.install(); // a client's first channel: its domain-socket connections write no line each
    }

    private ControlSockets() {
    }

    /** The directory of uid's switches' sockets. */
    public static Path directory(int uid) {
        Path shm = Path.of("/dev/shm");
        Path base = Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        return base.resolve("switchml-control-" + uid);
    }

    /**
     * The socket of uid's switch whose controller listens on TCP port {@code port} in this network namespace: the
     * namespace is in the name, since switches of one user in several namespaces (the emulated rack, containers
     * that share {@code /dev/shm}) may use the same port, and a client must reach the one its loopback reaches.
     */
    public static Path socket(int uid, int port) {
        return directory(uid).resolve("controller-" + NETWORK_NAMESPACE + "-" + port + ".sock");
    }

    /** This process's network namespace, as the kernel numbers it ("net:[4026531840]"); "0" where unknown. */
    private static final String NETWORK_NAMESPACE = networkNamespace();

    private static String networkNamespace() {
        try {
            String link = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
            String digits = link.replaceAll("[^0-9]", "");
            return digits.isEmpty() ? "0" : digits;
        } catch (IOException | RuntimeException e) {
            return "0";
        }
    }

    /** Why {@code path} (the directory, or a socket in it) cannot be taken for uid's, or null. */
    public static String untrusted(Path path, int uid) {
        try {
            if (Files.isSymbolicLink(path)) {
                return "is a link";
            }
            int owner = (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if (owner != uid) {
                return "belongs to uid " + owner + ", not " + uid;
            }
            if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                Set<PosixFilePermission> modes = Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS);
                if (modes.contains(PosixFilePermission.GROUP_WRITE) || modes.contains(PosixFilePermission.OTHERS_WRITE)) {
                    return "may be written by others";
                }
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return "cannot be read: " + e.getMessage();
        }
    }

    /**
     * A builder of a channel over the control socket of the switch at {@code host:port}, where that is a switch of
     * this host with such a socket; null otherwise (then TCP).
     */
    static ManagedChannelBuilder<?> builder(String host, int port) {
        if (!Boolean.parseBoolean(System.getProperty(PROPERTY, "true")) || !loopback(host) || !Epoll.isAvailable()) {
            return null;
        }
        int uid = listener(port);
        if (uid < 0) {
            return null;
        }
        Path socket = socket(uid, port);
        if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS) || untrusted(directory(uid), uid) != null
                || untrusted(socket, uid) != null) {
            return null;
        }
        return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()),
                        InsecureChannelCredentials.create())
                .channelType(EpollDomainSocketChannel.class).eventLoopGroup(group())
                .overrideAuthority("localhost:" + port);
    }

    private static synchronized EventLoopGroup group() {
        if (group == null) {
            group = new EpollEventLoopGroup(1, r -> {
                Thread t = new Thread(r, "switchml-control-socket");
                t.setDaemon(true);
                return t;
            });
        }
        return group;
    }

    private static boolean loopback(String host) {
        return host.equals("localhost") || host.startsWith("127.") || host.equals("::1") || host.equals("[::1]");
    }

    /** The uid that listens on TCP {@code port} of this host (loopback or every address), by the kernel; -1: none. */
    static int listener(int port) {
        String hexPort = String.format("%04X", port);
        for (Path table : TABLES) {
            try (Stream<String> lines = Files.lines(table)) {
                int uid = lines.skip(1).map(String::trim).map(l -> l.split("\\s+"))
                        .filter(f -> f.length > 7 && f[3].equals("0A") && f[1].endsWith(":" + hexPort)
                                && listensLocally(f[1].substring(0, f[1].indexOf(':'))))
                        .mapToInt(f -> Integer.parseInt(f[7])).findFirst().orElse(-1);
                if (uid >= 0) {
                    return uid;
                }
            } catch (IOException | RuntimeException e) {
                // no such table: the other may have it
            }
        }
        return -1;
    }

    /** Loopback (127.x, ::1, IPv4-mapped 127.x) or every address (all zeros), in the table's hex. */
    private static boolean listensLocally(String hex) {
        if (hex.chars().allMatch(c -> c == '0')) {
            return true;
        }
        if (hex.length() == 8) {
            return hex.endsWith("7F"); // little-endian: the first octet last
        }
        return hex.equals("00000000000000000000000001000000") || hex.startsWith("0000000000000000FFFF0000")
                && hex.endsWith("7F");
    }
}
