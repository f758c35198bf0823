package io.switchml.controller;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.SecurityLevel;
import io.grpc.ServerCredentials;
import io.grpc.internal.GrpcAttributes;
import io.grpc.netty.shaded.io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.util.AsciiString;
import io.switchml.control.ControlSockets;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's Unix-domain socket (docs/security.md, "Local users are tenants"): beside its TCP port, a switch
 * listens on {@code /dev/shm/switchml-control-<uid>/controller-<netns>-<port>.sock} ({@link ControlSockets}), in a directory
 * of its user's that nobody else can write, and reads each connecting peer's uid from the kernel (SO_PEERCRED, Netty's
 * {@code peerCredentials()}) as the connection is set up. The project's clients use it on their own when they call a
 * switch of this host ({@code ControlSockets.channelBuilder}).
 */
final class ControlSocket {
    private static final Logger LOG = LoggerFactory.getLogger(ControlSocket.class);

    private ControlSocket() {
    }

    /** The peer's address as the controller's rules see it: a domain-socket peer is on this host (loopback). */
    static InetAddress peerAddress(SocketAddress remote) {
        if (remote instanceof InetSocketAddress a) {
            return a.getAddress();
        }
        return remote != null && remote.getClass().getSimpleName().equals("DomainSocketAddress")
                ? InetAddress.getLoopbackAddress() : null;
    }

    /**
     * Where this switch's socket for controller port {@code port} goes, its directory made (0755, this user's, never
     * a link) if needed; null, with a warning, where that directory cannot be trusted or epoll is missing.
     */
    static Path prepare(int port) {
        if (!Epoll.isAvailable()) {
            LOG.debug("no Unix-domain control socket: Netty's epoll transport is not available here");
            return null;
        }
        int uid = LocalUsers.self();
        Path dir = ControlSockets.directory(uid);
        try {
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                try {
                    Files.createDirectory(dir);
                } catch (java.nio.file.FileAlreadyExistsException raced) {
                    // checked below like any existing one
                }
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
            String problem = ControlSockets.untrusted(dir, uid);
            if (problem != null) {
                LOG.warn("security: no Unix-domain control socket: {} {}; local callers use TCP", dir, problem);
                return null;
            }
            Path socket = ControlSockets.socket(uid, port);
            Files.deleteIfExists(socket); // a socket that a switch of this user left behind on the same port
            return socket;
        } catch (IOException | RuntimeException e) {
            LOG.warn("no Unix-domain control socket in {}: {}; local callers use TCP", dir, e.toString());
            return null;
        }
    }

    /** Plaintext over the domain socket, with the peer's uid from the kernel in the connection's attributes. */
    static ServerCredentials credentials() {
        return InternalNettyServerCredentials.create(new InternalProtocolNegotiator.ProtocolNegotiator() {
            @Override
            public AsciiString scheme() {
                return AsciiString.of("http");
            }

            @Override
            public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpc) {
                return new ChannelHandlerAdapter() {
                    @Override
                    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
                        Attributes.Builder attributes = Attributes.newBuilder()
                                .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, ctx.channel().remoteAddress())
                                .set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, ctx.channel().localAddress())
                                .set(GrpcAttributes.ATTR_SECURITY_LEVEL, SecurityLevel.NONE);
                        int uid = LocalUsers.UNKNOWN;
                        if (ctx.channel() instanceof EpollDomainSocketChannel channel) {
                            try {
                                uid = channel.peerCredentials().uid();
                            } catch (IOException e) {
                                // unknown local: the smallest share
                            }
                        }
                        attributes.set(LocalUserFilter.UID, uid);
                        // gRPC's handler in place first (it needs its context), then told who connected, before any
                        // byte is read: all on the connection's event loop.
                        ctx.pipeline().replace(this, null, grpc);
                        grpc.handleProtocolNegotiationCompleted(attributes.build(), null);
                    }
                };
            }

            @Override
            public void close() {
            }
        });
    }
}
