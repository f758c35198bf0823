package io.switchml.cli;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainSocketAddress;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * systemd's readiness protocol (sd_notify): under a unit of {@code Type=notify}, systemd names a Unix datagram
 * socket in {@code NOTIFY_SOCKET}, and the service sends {@code READY=1} there once it serves, so that units
 * ordered after it start only then. Sent through Netty's epoll transport, as the JDK has no Unix datagram
 * sockets. Without {@code NOTIFY_SOCKET} (not started by systemd, or {@code Type=simple}) nothing is sent.
 */
final class SystemdNotify {
    private static final long SEND_TIMEOUT_MS = 5_000;

    private SystemdNotify() {
    }

    /**
     * Sends {@code READY=1} with {@code status} (shown by {@code systemctl status}) when systemd asks for it;
     * a failure is only reported on {@code warnings}: the switch serves either way, and systemd's own start
     * timeout tells the operator.
     */
    static void ready(String status, Map<String, String> env, PrintStream warnings) {
        String socket = env.get("NOTIFY_SOCKET");
        if (socket == null || socket.isEmpty()) {
            return;
        }
        if (socket.startsWith("@")) {
            warnings.println("switchml switch: NOTIFY_SOCKET " + socket + " is an abstract socket, which this switch"
                    + " cannot reach; systemd is not told it is ready (use Type=simple, or a socket path)");
            return;
        }
        if (!Epoll.isAvailable()) {
            warnings.println("switchml switch: cannot tell systemd it is ready: Netty's epoll transport is not"
                    + " available here (" + Epoll.unavailabilityCause() + ")");
            return;
        }
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        try {
            Channel channel = new Bootstrap().group(group).channel(EpollDomainDatagramChannel.class)
                    .handler(new ChannelInboundHandlerAdapter()).connect(new DomainSocketAddress(socket)).sync().channel();
            String message = "READY=1\nSTATUS=" + status.replace('\n', ' ') + "\nMAINPID=" + ProcessHandle.current().pid() + "\n";
            ChannelFuture sent = channel.writeAndFlush(Unpooled.copiedBuffer(message, StandardCharsets.UTF_8));
            if (!sent.await(SEND_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                warnings.println("switchml switch: telling systemd it is ready (NOTIFY_SOCKET " + socket + ") took over "
                        + SEND_TIMEOUT_MS + " ms; gave up");
            } else if (!sent.isSuccess()) {
                warnings.println("switchml switch: cannot tell systemd it is ready through NOTIFY_SOCKET " + socket + ": "
                        + sent.cause());
            }
            channel.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) { // sync() rethrows the connect's IOException unchecked
            warnings.println("switchml switch: cannot tell systemd it is ready through NOTIFY_SOCKET " + socket + ": " + e);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
