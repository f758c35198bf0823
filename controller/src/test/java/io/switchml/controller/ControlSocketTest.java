package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.switchml.control.ControlChannel;
import io.switchml.control.ControlSockets;
import io.switchml.control.ControllerAddress;
import io.switchml.control.ControllerCredentials;
import io.switchml.control.TlsSettingNames;
import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.StatusRequest;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Security round 5 (docs/security.md, "Local users are tenants"): a plaintext switch also listens on a Unix-domain
 * socket, in a directory of its user's that nobody else may write, and reads each caller's uid from the kernel
 * (SO_PEERCRED); the project's clients take it on their own for a switch of their host. With the socket table
 * hidden, a caller over TCP is "unknown local", one over the socket still its uid: the socket is what named it.
 */
class ControlSocketTest extends ControllerTestSupport {
    @AfterEach
    void showTheTable() {
        LocalUsers.tables = LocalUsers.KERNEL_TABLES;
    }

    @Test
    void localClientsReachTheSwitchOverItsSocketAndAreTheirUser() throws Exception {
        assumeThat(Epoll.isAvailable()).as("needs Netty's epoll transport").isTrue();
        Path socket = service.controlSocket().orElseThrow();
        int uid = LocalUsers.self();
        assertThat(socket).isEqualTo(ControlSockets.socket(uid, service.controllerPort()));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rw-rw-rw-");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent()))).isEqualTo("rwxr-xr-x");
        assertThat(ControlSockets.untrusted(socket.getParent(), uid)).isNull();

        // The socket table hidden: only the socket's peer credentials can name the caller.
        LocalUsers.tables = List.of(Path.of("/nonexistent/tcp"));
        try (ControlChannel client = ControlChannel.open(new ControllerAddress(LOOPBACK, service.controllerPort()),
                ControllerCredentials.NONE, TlsSettingNames.CTL, null, "", false)) {
            JoinResponse joined = client.call("join", Duration.ofSeconds(20),
                    stub -> stub.join(joinRequest("over-the-socket", 0, 1)));
            assertThat(joined.getJobNumber()).isNotNegative();
        }
        // Over TCP (this test's own channel), the same user is now unknown.
        formJob("over-tcp", 1, 41_000);
        List<JobStatus> jobs = stub().status(StatusRequest.getDefaultInstance()).getJobsList();
        assertThat(jobs).filteredOn(j -> j.getJobName().equals("over-the-socket")).singleElement()
                .satisfies(j -> assertThat(j.getTenant()).isEqualTo(selfTenant()));
        assertThat(jobs).filteredOn(j -> j.getJobName().equals("over-tcp")).singleElement()
                .satisfies(j -> assertThat(j.getTenant()).isEqualTo(Caller.UNKNOWN_LOCAL));

        // A connection is no line in the log (gRPC asks the socket for TCP's keepalive, which Netty would warn of).
        try (LogBytes log = new LogBytes()) {
            for (int i = 0; i < 50; i++) {
                try (ControlChannel client = ControlChannel.open(new ControllerAddress(LOOPBACK, service.controllerPort()),
                        ControllerCredentials.NONE, TlsSettingNames.CTL, null, "", false)) {
                    client.call("status", Duration.ofSeconds(20), stub -> stub.status(StatusRequest.getDefaultInstance()));
                }
            }
            System.out.printf("50 connections over the control socket: %d bytes, %d lines of log%n", log.bytes(),
                    log.lines());
            assertThat(log.lines()).as("lines of log for 50 connections").isLessThan(5);
        }

        service.close();
        service = null;
        assertThat(Files.exists(socket, LinkOption.NOFOLLOW_LINKS)).as("the socket after the switch closed").isFalse();
    }

    @Test
    void aDirectoryOfAnotherUserIsNotTrusted() throws Exception {
        assumeThat(LocalUsers.self()).as("needs root, to give a directory to another user").isZero();
        Path dir = Files.createTempDirectory("switchml-control-planted");
        try {
            Files.setAttribute(dir, "unix:uid", 65534);
            assertThat(ControlSockets.untrusted(dir, 0)).contains("belongs to uid 65534");
            Files.setAttribute(dir, "unix:uid", 0);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
            assertThat(ControlSockets.untrusted(dir, 0)).contains("may be written by others");
        } finally {
            Files.delete(dir);
        }
    }
}
