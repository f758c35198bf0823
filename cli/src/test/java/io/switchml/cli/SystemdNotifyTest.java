package io.switchml.cli;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainDatagramPacket;
import io.netty.channel.unix.DomainSocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The switch tells systemd it is ready as sd_notify does: one datagram to the socket systemd names. */
class SystemdNotifyTest {
    @Test
    void readyGoesToTheSocketSystemdNames(@TempDir Path dir) throws Exception {
        assumeTrue(Epoll.isAvailable(), "Netty's epoll transport (Linux)");
        // Short: a Unix socket path holds at most 107 bytes.
        Path socket = dir.resolve("notify");
        BlockingQueue<String> received = new LinkedBlockingQueue<>();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        try {
            Channel systemd = new Bootstrap().group(group).channel(EpollDomainDatagramChannel.class)
                    .handler(new SimpleChannelInboundHandler<DomainDatagramPacket>() {
                        @Override
                        protected void channelRead0(ChannelHandlerContext ctx, DomainDatagramPacket packet) {
                            received.add(packet.content().toString(StandardCharsets.UTF_8));
                        }
                    }).bind(new DomainSocketAddress(socket.toString())).sync().channel();
            ByteArrayOutputStream warnings = new ByteArrayOutputStream();
            SystemdNotify.ready("switchml switch ready: controller 127.0.0.1:50099", Map.of("NOTIFY_SOCKET", socket.toString()),
                    new PrintStream(warnings, true, StandardCharsets.UTF_8));
            String message = received.poll(10, TimeUnit.SECONDS);
            assertThat(message).as("the datagram systemd waits for; warnings: %s", warnings).isNotNull();
            assertThat(message.lines()).containsExactly("READY=1", "STATUS=switchml switch ready: controller 127.0.0.1:50099",
                    "MAINPID=" + ProcessHandle.current().pid());
            systemd.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void withoutSystemdNothingIsSentAndAnUnreachableSocketIsAWarning() {
        ByteArrayOutputStream warnings = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(warnings, true, StandardCharsets.UTF_8);
        SystemdNotify.ready("ready", Map.of(), out);
        assertThat(warnings.toString(StandardCharsets.UTF_8)).isEmpty();
        SystemdNotify.ready("ready", Map.of("NOTIFY_SOCKET", "@/org/freedesktop/systemd1/notify"), out);
        assertThat(warnings.toString(StandardCharsets.UTF_8)).contains("is an abstract socket");
        if (Epoll.isAvailable()) {
            SystemdNotify.ready("ready", Map.of("NOTIFY_SOCKET", "/nonexistent/notify"), out);
            assertThat(warnings.toString(StandardCharsets.UTF_8)).as("a socket nobody serves is a warning, not a failure")
                    .contains("cannot tell systemd it is ready through NOTIFY_SOCKET /nonexistent/notify");
        }
    }
}
