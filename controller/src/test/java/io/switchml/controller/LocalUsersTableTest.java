package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Security round 5 (docs/security.md, "Local users are tenants"): the uid of a local caller comes from the
 * kernel's socket table, looked up by the caller's address and port and the controller's; a caller the table
 * does not show is "unknown local", whatever loopback address it uses.
 */
class LocalUsersTableTest {
    @Test
    void readsTheOwnerOfTheCallersSocketFromTheTable() throws Exception {
        assumeThat(ByteOrder.nativeOrder()).isEqualTo(ByteOrder.LITTLE_ENDIAN);
        // 127.0.0.1:40000 -> 127.0.0.1:50099 owned by uid 1001, and the switch's own end (uid 0) the other way.
        List<String> table = List.of(
                "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
                "   0: 0100007F:C3B3 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 1 1",
                "   1: 0100007F:9C40 0100007F:C3B3 01 00000000:00000000 00:00000000 00000000  1001        0 2 1");
        InetSocketAddress caller = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 40_000);
        InetSocketAddress controller = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 50_099);
        assertThat(LocalUsers.find(table, caller, controller)).isEqualTo(1001);
        assertThat(LocalUsers.find(table, controller, caller)).isEqualTo(0);
        assertThat(LocalUsers.find(table, new InetSocketAddress(caller.getAddress(), 40_001), controller))
                .isEqualTo(LocalUsers.UNKNOWN);
        // tcp6: an IPv4-mapped address reads as the IPv4 one.
        assertThat(LocalUsers.address("0000000000000000FFFF00000100007F")).isEqualTo(InetAddress.getByName("127.0.0.1"));
        assertThat(LocalUsers.address("00000000000000000000000001000000")).isEqualTo(InetAddress.getByName("::1"));
    }

    @Test
    void aLiveConnectionIsItsOwnersAndUnknownsShareOneTenant() throws Exception {
        assumeThat(Files.isReadable(Path.of("/proc/net/tcp"))).isTrue();
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
             Socket client = new Socket("127.0.0.1", server.getLocalPort());
             Socket accepted = server.accept()) {
            int uid = LocalUsers.uidOf((InetSocketAddress) accepted.getRemoteSocketAddress(),
                    (InetSocketAddress) accepted.getLocalSocketAddress());
            assertThat(uid).isEqualTo(LocalUsers.self()).isNotEqualTo(LocalUsers.UNKNOWN);
            assertThat(client.isConnected()).isTrue();
        }
        InetAddress two = InetAddress.getByName("127.0.0.2");
        assertThat(Caller.tenantOf(null, two, LocalUsers.UNKNOWN)).isEqualTo(Caller.UNKNOWN_LOCAL);
        assertThat(Caller.tenantOf(null, InetAddress.getByName("127.0.0.3"), null)).isEqualTo(Caller.UNKNOWN_LOCAL);
        assertThat(Caller.tenantOf(null, two, 0)).startsWith("uid 0");
        assertThat(Caller.tenantOf("CN=a", two, 0)).isEqualTo("certificate CN=a");
        assertThat(Caller.tenantOf(null, InetAddress.getByName("192.0.2.7"), null)).isEqualTo("192.0.2.7");
    }
}
