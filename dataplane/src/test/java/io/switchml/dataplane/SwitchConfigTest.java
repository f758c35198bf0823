package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SwitchConfigTest {
    @Test
    void defaults() {
        SwitchConfig config = new SwitchConfig();

        assertThat(config.bindAddress()).isEqualTo("0.0.0.0");
        assertThat(config.basePort()).isEqualTo(48864);
        assertThat(config.portCount()).isEqualTo(1);
        assertThat(config.ingressDropProbability()).isZero();
        assertThat(config.egressDropProbability()).isZero();
        assertThat(config.dropSeed()).isZero();
        assertThat(config.nativeTransport()).isTrue();
        assertThat(config.poolSlots()).isEqualTo(65536);
        assertThat(config.jobQuotaSlots()).as("the whole pool").isEqualTo(65536);
    }

    @Test
    void poolAndQuota() {
        SwitchConfig config = new SwitchConfig().poolSlots(1000);
        assertThat(config.jobQuotaSlots()).as("follows the pool").isEqualTo(1000);
        config.jobQuotaSlots(100);
        assertThat(config.jobQuotaSlots()).isEqualTo(100);
        assertThat(config.copy().jobQuotaSlots()).isEqualTo(100);
        assertThat(config.copy().poolSlots()).isEqualTo(1000);

        assertThatThrownBy(() -> new SwitchConfig().poolSlots(0)).hasMessageContaining("pool slots 0");
        assertThatThrownBy(() -> new SwitchConfig().poolSlots((1 << 24) + 1)).hasMessageContaining("pool slots");
        assertThatThrownBy(() -> new SwitchConfig().jobQuotaSlots(-1)).hasMessageContaining("job quota -1");
        assertThatThrownBy(() -> new SwitchConfig().poolSlots(10).jobQuotaSlots(11).validate())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("job quota 11 slots exceeds the pool of 10 slots");
    }

    @Test
    void rejectsOutOfRangeSettings() {
        assertThatThrownBy(() -> new SwitchConfig().basePort(-1)).hasMessageContaining("base port -1");
        assertThatThrownBy(() -> new SwitchConfig().basePort(65536)).hasMessageContaining("base port 65536");
        assertThatThrownBy(() -> new SwitchConfig().portCount(0)).hasMessageContaining("port count 0");
        assertThatThrownBy(() -> new SwitchConfig().portCount(17)).hasMessageContaining("port count 17");
        assertThatThrownBy(() -> new SwitchConfig().ingressDropProbability(1.5)).hasMessageContaining("ingress");
        assertThatThrownBy(() -> new SwitchConfig().egressDropProbability(Double.NaN)).hasMessageContaining("egress");
        assertThatThrownBy(() -> new SwitchConfig().bindAddress(" ")).hasMessageContaining("bind address");
        assertThatThrownBy(() -> new SwitchConfig().basePort(65535).portCount(2).validate())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exceed 65535");
    }

    @Test
    void copyIsIndependent() {
        SwitchConfig config = new SwitchConfig().basePort(0).portCount(3).ingressDropProbability(0.5).dropSeed(9);
        SwitchConfig copy = config.copy();
        config.portCount(1);

        assertThat(copy.portCount()).isEqualTo(3);
        assertThat(copy.basePort()).isZero();
        assertThat(copy.ingressDropProbability()).isEqualTo(0.5);
        assertThat(copy.dropSeed()).isEqualTo(9);
    }

    @Test
    void dropsNeedFaultInjectionAllowed() {
        assertThat(new SwitchConfig().allowFaultInjection()).isFalse();
        assertThatThrownBy(() -> new SwitchConfig().egressDropProbability(0.1).validate())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--allow-fault-injection");
        new SwitchConfig().egressDropProbability(0.1).allowFaultInjection(true).validate();
        assertThat(new SwitchConfig().allowFaultInjection(true).copy().allowFaultInjection()).isTrue();
    }

    @Test
    void theSharedMemorySpinDefaultsToTheHostsAndCanBeSet() {
        assertThat(new SwitchConfig().ipcSpinNanos()).isEqualTo(io.switchml.ipc.IpcPoller.defaultSpinNanos());
        assertThat(new SwitchConfig().ipcSpinMicros(7).ipcSpinNanos()).isEqualTo(7_000);
        assertThat(new SwitchConfig().ipcSpinMicros(0).copy().ipcSpinNanos()).as("copied").isZero();
        assertThatThrownBy(() -> new SwitchConfig().ipcSpinMicros(-1)).hasMessageContaining("at least 0");
    }
}
