package io.switchml.launch;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What {@link Rack} checks before it touches the system: rates, its spec, root. */
class RackTest {
    @Test
    void readsTcRates() {
        assertThat(Rack.parseRate("500mbit")).isEqualTo(500_000_000L);
        assertThat(Rack.parseRate("1gbit")).isEqualTo(1_000_000_000L);
        assertThat(Rack.parseRate("1.5Gbit")).isEqualTo(1_500_000_000L);
        assertThat(Rack.parseRate("100mbps")).as("tc's bps are bytes per second").isEqualTo(800_000_000L);
        assertThat(Rack.parseRate("64000")).isEqualTo(64_000L);
        assertThatThrownBy(() -> Rack.parseRate("fast")).hasMessageContaining("cannot read the rate 'fast'");
        assertThatThrownBy(() -> Rack.parseRate("10tbit")).hasMessageContaining("cannot read the rate");
    }

    @Test
    void burstIsAtLeastOneMillisecondAnd128KiB() {
        assertThat(new Rack.Spec(2, 200_000_000L, 9000, 0).burstBytes()).isEqualTo(128 << 10);
        assertThat(new Rack.Spec(2, 10_000_000_000L, 9000, 0).burstBytes()).isEqualTo(1_250_000L);
    }

    @Test
    void specIsChecked() {
        assertThatThrownBy(() -> new Rack.Spec(0, 1_000_000, 1500, 0)).hasMessageContaining("1..200 workers");
        assertThatThrownBy(() -> new Rack.Spec(2, 1_000, 1500, 0)).hasMessageContaining("at least 8kbit");
        assertThatThrownBy(() -> new Rack.Spec(2, 1_000_000, 100, 0)).hasMessageContaining("MTU");
        assertThatThrownBy(() -> new Rack.Spec(2, 1_000_000, 1500, 1)).hasMessageContaining("[0, 1)");
        assertThatThrownBy(() -> new Rack.Spec(2, 1_000_000, 1500, -0.1)).hasMessageContaining("[0, 1)");
        assertThatThrownBy(() -> new Rack.Spec(2, 1_000_000, 1500, 1e-9)).hasMessageContaining("resolution");
        assertThat(new Rack.Spec(2, 1_000_000, 1500, 0.001).describe()).contains("UDP drop probability 0.001");
        assertThatThrownBy(() -> new Rack.Spec(2, 1_000_000, 1500, 0, 17)).hasMessageContaining("at most 16 hosts")
                .hasMessageContaining("shards");
        assertThat(new Rack.Spec(2, 1_000_000, 1500, 0, 4).topology()).isEqualTo("4-host");
        assertThatThrownBy(() -> new Rack.Spec(2, 1_000_000, 1500, 0, -1)).hasMessageContaining("at least 1");
        assertThat(new Rack.Spec(2, 1_000_000, 1500, 0).topology()).isEqualTo("fabric");
        Rack.Spec host = new Rack.Spec(2, 1_000_000, 1500, 0, 1);
        assertThat(host.topology()).isEqualTo("1-host");
        assertThat(host.describe()).contains("switch on 1 server(s) behind one link each");
        assertThat(host.withWorkers(4).switchHosts()).isEqualTo(1);
    }

    @Test
    void aRackOfLeavesIsChecked() {
        Rack.Spec leaves = new Rack.Spec(4, 400_000_000L, 9000, 0, 0, 2);
        assertThat(leaves.topology()).isEqualTo("2-leaves");
        assertThat(leaves.describe()).contains("2 racks with a leaf switch on each fabric, under a spine");
        assertThat(leaves.withWorkers(3).leaves()).isEqualTo(2);
        assertThatThrownBy(() -> new Rack.Spec(2, 1_000_000, 1500, 0, 0, 3)).hasMessageContaining("one worker per leaf");
        assertThatThrownBy(() -> new Rack.Spec(4, 1_000_000, 1500, 0, 1, 2)).hasMessageContaining("leave out --switch-hosts");
        assertThatThrownBy(() -> new Rack.Spec(200, 1_000_000, 1500, 0, 0, 51)).hasMessageContaining("outside 1..50");
    }

    @Test
    void hostsOfSeveralRanksAreChecked() {
        Rack.Spec hosts = new Rack.Spec(4, 400_000_000L, 9000, 0, 0, 0, 2);
        assertThat(hosts.hosts()).isEqualTo(2);
        assertThat(hosts.topology()).isEqualTo("2x2-agent-per-host");
        assertThat(hosts.describe()).contains("2 hosts of 2 ranks behind one link each, a host's ranks summing through one agent");
        assertThat(new Rack.Spec(4, 400_000_000L, 9000, 0).ranksPerHost()).isEqualTo(1);
        assertThatThrownBy(() -> new Rack.Spec(5, 1_000_000, 1500, 0, 0, 0, 2)).hasMessageContaining("do not fill hosts of 2");
        assertThatThrownBy(() -> new Rack.Spec(4, 1_000_000, 1500, 0, 0, 2, 2)).hasMessageContaining("leave out --leaves");
        assertThatThrownBy(() -> new Rack.Spec(4, 1_000_000, 1500, 0, 0, 0, 0)).hasMessageContaining("at least 1");
    }

    @Test
    void needsRootWithAClearMessage() {
        assertThatThrownBy(() -> Rack.requireRoot(1000)).isInstanceOf(LaunchException.class)
                .hasMessageContaining("needs root").hasMessageContaining("uid 1000");
        Rack.requireRoot(0);
        assertThat(Rack.effectiveUid()).isGreaterThanOrEqualTo(0);
    }
}
