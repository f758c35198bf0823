package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.switchml.protocol.PayloadSize;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The switch's own address and UDP ports are no worker's: an endpoint there is refused at
 * installation, and a worker matched by address alone on the switch's address never matches the
 * switch's own ports, so one spoofed datagram cannot make the switch answer itself (before: 350,000
 * packets in 5 s, on one core, which also kept the job from ever being idle).
 */
class OwnSourcesTest {
    private static final PayloadSize SIZE = PayloadSize.B256;
    private static final int[] SWITCH_PORTS = {48864, 48865};

    private final SwitchHarness harness = new SwitchHarness();
    private final InetAddress switchAddress = address("10.0.0.5");
    private final InetAddress other = address("10.0.0.6");

    {
        harness.controlPlane.ownSources(new OwnSources(switchAddress, SWITCH_PORTS));
    }

    @Test
    void anEndpointAtTheSwitchsOwnAddressAndPortIsRefused() {
        for (int port : SWITCH_PORTS) {
            assertThatThrownBy(() -> harness.install(new JobSpec(1, "loop", SIZE, 8, 1,
                    List.of(WorkerEndpoint.of(other, 5000), WorkerEndpoint.of(switchAddress, port)), false)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("10.0.0.5:" + port + " of job 1 (rank 1) is the switch's own address and UDP port")
                    .hasMessageContaining("would send the rank's results to itself");
            assertThat(harness.controlPlane.job(1)).as("nothing installed").isEmpty();
            assertThat(harness.controlPlane.tables().workers().size()).isZero();
        }
        // Its address with another port, or its port at another address, are a worker's.
        harness.install(new JobSpec(2, "fine", SIZE, 8, 1,
                List.of(WorkerEndpoint.of(switchAddress, 5000), WorkerEndpoint.of(other, SWITCH_PORTS[0])), false));
        assertThat(harness.controlPlane.job(2)).isPresent();
    }

    @Test
    void aWorkerMatchedByAddressOnTheSwitchsAddressNeverMatchesTheSwitchsPorts() {
        JobSpec spec = harness.install(new JobSpec(3, "switchml", SIZE, 8, 1,
                List.of(WorkerEndpoint.matchedByAddress(switchAddress), WorkerEndpoint.matchedByAddress(other)), false));

        // A spoofed contribution "from" the switch itself: dropped, nothing sent, no activity.
        for (int port : SWITCH_PORTS) {
            NextStep step = harness.deliver(switchAddress, port, 0, TestPackets.packet(SIZE, 9, 1, 0, 0, 0, 0,
                    TestPackets.filled(64, 1)));
            assertThat(step).as("from the switch's own port %d", port).isEqualTo(NextStep.DROP);
        }
        assertThat(harness.count(DropReason.UNKNOWN_SOURCE)).isEqualTo(SWITCH_PORTS.length);
        assertThat(harness.sink.drain()).isEmpty();
        assertThat(harness.program.activity().get(spec.jobNumber())).as("activity of the job").isZero();

        // The same worker from any other port is served as before, and the job is exact.
        harness.deliver(switchAddress, 6000, 0, TestPackets.packet(SIZE, 9, 1, 0, 0, 0, 0, TestPackets.filled(64, 2)));
        NextStep last = harness.deliver(other, 6001, 0, TestPackets.packet(SIZE, 9, 1, 0, 0, 0, 0,
                TestPackets.filled(64, 3)));
        assertThat(last).isEqualTo(NextStep.MULTICAST);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(2);
        assertThat(sent.get(0).elements()).containsOnly(5);

        // Removing the job removes what its install added.
        harness.controlPlane.removeJob(spec.jobNumber());
        assertThat(harness.controlPlane.tables().workers().size()).isZero();
    }

    @Test
    void onTheWildcardEveryAddressOfThisHostIsTheSwitchs() throws Exception {
        OwnSources wildcard = new OwnSources(address("0.0.0.0"), SWITCH_PORTS);
        assertThat(wildcard.own(address("127.0.0.1"), SWITCH_PORTS[0])).isTrue();
        assertThat(wildcard.own(address("127.3.2.1"), SWITCH_PORTS[1])).as("all of 127.0.0.0/8 is this host's").isTrue();
        assertThat(wildcard.own(address("127.0.0.1"), 5000)).isFalse();
        assertThat(wildcard.own(address("192.0.2.1"), SWITCH_PORTS[0])).as("TEST-NET-1, no host's here").isFalse();
        InetAddress nic = NetworkInterface.networkInterfaces().flatMap(NetworkInterface::inetAddresses)
                .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress()).findFirst().orElse(null);
        if (nic != null) {
            assertThat(wildcard.own(nic, SWITCH_PORTS[0])).as("%s, an interface's", nic).isTrue();
        }
        OwnSources loopbackOnly = new OwnSources(address("127.0.0.1"), SWITCH_PORTS);
        assertThat(loopbackOnly.own(address("127.0.0.1"), SWITCH_PORTS[0])).isTrue();
        assertThat(loopbackOnly.own(address("127.0.0.2"), SWITCH_PORTS[0]))
                .as("a switch bound to 127.0.0.1 does not receive what goes to 127.0.0.2").isFalse();
    }

    @Test
    void aStartedSwitchRefusesItsOwnSourcesAsWorkers() {
        try (AggregationSwitch sw = AggregationSwitch.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0)
                .portCount(2))) {
            InetAddress loopback = address("127.0.0.1");
            for (int port : sw.ports()) {
                assertThat(sw.isOwnSource(loopback, port)).isTrue();
                assertThatThrownBy(() -> sw.installJob(new JobSpec(0, "self", SIZE, 8, 1,
                        List.of(WorkerEndpoint.of(loopback, port)), false)))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("switch's own address");
            }
            assertThat(sw.isOwnSource(address("127.0.0.2"), sw.ports()[0])).isFalse();
            assertThat(sw.job(0)).isEmpty();
        }
    }

    private static InetAddress address(String dotted) {
        try {
            return InetAddress.getByName(dotted);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
