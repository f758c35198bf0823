package io.switchml.controller;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.switchml.controller.compat.proto.PacketSize;
import io.switchml.controller.compat.proto.SessionGrpc;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.SetDropProbabilitiesRequest;
import io.switchml.controller.proto.StatusRequest;
import io.switchml.dataplane.SwitchConfig;
import java.net.InetAddress;
import java.net.NetworkInterface;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static io.switchml.controller.ControllerTestSupport.assertFails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What a switch started with its defaults allows and refuses, and the start-up warnings. */
class SecurityDefaultsTest {
    private static final String LOOPBACK = "127.0.0.1";

    private static void withController(AggregationService service, Consumer<ManagedChannel> body) throws InterruptedException {
        ManagedChannel channel = ManagedChannelBuilder.forAddress(LOOPBACK, service.controllerPort()).usePlaintext().build();
        try {
            body.accept(channel);
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
            service.close();
        }
    }

    @Test
    void theDropSimulatorIsRefusedByDefaultAndStaysAtZero() throws InterruptedException {
        AggregationService service = AggregationService.start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0),
                LOOPBACK, 0);
        withController(service, channel -> {
            ControllerGrpc.ControllerBlockingStub stub = ControllerGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS);
            assertFails(() -> stub.setDropProbabilities(SetDropProbabilitiesRequest.newBuilder().setIngress(0.5).build()),
                    Status.Code.PERMISSION_DENIED, "--allow-fault-injection");
            assertThat(service.dataplane().ingressDropProbability()).isZero();
            assertThat(service.dataplane().egressDropProbability()).isZero();
            // Inspection stays open on loopback without an operator token.
            assertThat(stub.status(StatusRequest.getDefaultInstance()).getDropProbabilities().getIngress()).isZero();
            assertThat(service.exposureWarnings()).as("loopback only: nothing to warn about").isEmpty();
        });
    }

    @Test
    void aSwitchCannotStartDroppingWithoutFaultInjectionAllowed() {
        assertThatThrownBy(() -> AggregationService.start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0)
                .ingressDropProbability(0.1), LOOPBACK, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--allow-fault-injection");
    }

    @Test
    void aControllerWithoutCredentialsTakesCallsFromItsHostOnlyAndSaysSo() throws InterruptedException {
        // Protected mode: no door is open beyond the host, so the one line says how workers elsewhere get in.
        AggregationService service = AggregationService.start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0),
                "0.0.0.0", 0);
        withController(service, channel -> assertThat(service.exposureWarnings()).singleElement().asString()
                .contains("protected mode", "--trusted-networks"));
        ControllerSecurity defaults = new ControllerSecurity();
        assertThat(defaults.trusts(InetAddress.getLoopbackAddress())).isTrue();
        assertThat(defaults.trusts(ip("10.1.2.3"))).isFalse();
        assertThat(defaults.describeTrust()).startsWith("protected mode: control-plane calls from this host only");
        assertThat(new ControllerSecurity().operatorToken("operator-token-0123456789").trusts(ip("10.1.2.3")))
                .as("credentials open every network").isTrue();
        ControllerSecurity lab = new ControllerSecurity().trustedNetworks(NetworkPolicy.parse("--trusted-networks",
                "10.1.0.0/16"));
        assertThat(lab.trusts(ip("10.1.2.3"))).isTrue();
        assertThat(lab.trusts(ip("10.2.0.1"))).isFalse();
        assertThat(lab.trusts(InetAddress.getLoopbackAddress())).as("this host always").isTrue();
    }

    /** Security round 4, item 4: a call from another address of this host is not from loopback. */
    @Test
    void protectedModeRefusesCallsFromBeyondLoopbackUntilTheNetworkIsTrusted() throws Exception {
        InetAddress own = NetworkInterface.networkInterfaces().filter(i -> {
            try {
                return i.isUp() && !i.isLoopback();
            } catch (java.net.SocketException e) {
                return false;
            }
        }).flatMap(NetworkInterface::inetAddresses).filter(a -> a instanceof java.net.Inet4Address).findFirst().orElse(null);
        Assumptions.assumeTrue(own != null, "this host has no IPv4 address beyond loopback to call from");
        for (boolean trusted : new boolean[] {false, true}) {
            ControllerSecurity security = trusted
                    ? new ControllerSecurity().trustedNetworks(NetworkPolicy.parse("--trusted-networks", own.getHostAddress() + "/32"))
                    : new ControllerSecurity();
            AggregationService service = AggregationService.start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0),
                    "0.0.0.0", 0, security);
            ManagedChannel channel = ManagedChannelBuilder.forAddress(own.getHostAddress(), service.controllerPort())
                    .usePlaintext().build();
            try {
                ControllerGrpc.ControllerBlockingStub stub = ControllerGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS);
                if (trusted) {
                    assertThat(stub.status(StatusRequest.getDefaultInstance()).getJobsCount()).isZero();
                } else {
                    assertFails(() -> stub.status(StatusRequest.getDefaultInstance()), Status.Code.PERMISSION_DENIED,
                            "protected mode", "--trusted-networks", own.getHostAddress());
                }
            } finally {
                channel.shutdownNow();
                channel.awaitTermination(5, TimeUnit.SECONDS);
                service.close();
            }
        }
    }

    private static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aControllerBeyondLoopbackWithoutProtectionIsWarnedAbout() throws InterruptedException {
        AggregationService service = AggregationService.start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0),
                "0.0.0.0", 0, new ControllerSecurity().trustedNetworks(NetworkPolicy.parse("--trusted-networks", "on")));
        withController(service, channel -> assertThat(service.exposureWarnings())
                .anySatisfy(w -> assertThat(w).contains("without TLS"))
                .anySatisfy(w -> assertThat(w).contains("without an operator token"))
                .anySatisfy(w -> assertThat(w).contains("--require-job-secrets")
                        .contains("this project's launchers").contains("take a free seat of a job that has none")
                        .contains("cancel such a job while it forms").contains("leaving or aborting any job needs that id")
                        .doesNotContain("join, leave or abort"))
                .anySatisfy(w -> assertThat(w).contains("--switchml-sessions")));
    }

    @Test
    void switchmlSessionsCanBeTurnedOffOrLimitedToSubnets() throws InterruptedException {
        UdpSessionRequest session = UdpSessionRequest.newBuilder().setSessionId(7).setRank(0).setNumWorkers(2)
                .setIpv4(0x7f000001).setPacketSize(PacketSize.forNumber(1)).build();
        for (String policy : new String[] {"off", "10.0.0.0/8,192.168.0.0/16"}) {
            AggregationService service = AggregationService.start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0),
                    LOOPBACK, 0, new ControllerSecurity().switchmlSessions(NetworkPolicy.parse("--switchml-sessions", policy)));
            withController(service, channel -> assertFails(() -> SessionGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(10, TimeUnit.SECONDS).udpSession(session), Status.Code.PERMISSION_DENIED,
                    policy.equals("off") ? "SwitchML sessions are off" : "not allowed on this switch"));
        }
        AggregationService allowed = AggregationService.start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0),
                LOOPBACK, 0, new ControllerSecurity().switchmlSessions(NetworkPolicy.parse("--switchml-sessions", "127.0.0.0/8")));
        withController(allowed, channel -> assertThat(SessionGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS).udpSession(session).getSessionId()).isEqualTo(7));
    }
}
