package io.switchml.client;

import io.switchml.protocol.PayloadSize;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PathSizingTest {
    @Test
    void theLargestPayloadThatFitsTheMtu() {
        assertThat(PathSizing.forMtu(65536)).isEqualTo(PayloadSize.B61440);
        assertThat(PathSizing.forMtu(9000)).isEqualTo(PayloadSize.B8192);
        assertThat(PathSizing.forMtu(1500)).isEqualTo(PayloadSize.B1024);
        assertThat(PathSizing.forMtu(1062)).isEqualTo(PayloadSize.B1024); // 1024 + 10 + 28 bytes exactly
        assertThat(PathSizing.forMtu(1061)).isEqualTo(PayloadSize.B512);
        assertThat(PathSizing.forMtu(-1)).as("unknown: as for Ethernet").isEqualTo(PayloadSize.B1024);
    }

    @Test
    void theWindowKeepsAboutHalfAMebibyteInFlight() {
        assertThat(PathSizing.window(PayloadSize.B61440)).isEqualTo(8);
        assertThat(PathSizing.window(PayloadSize.B8192)).isEqualTo(64);
        assertThat(PathSizing.window(PayloadSize.B1024)).isEqualTo(64);
        assertThat(PathSizing.window(PayloadSize.B256)).isEqualTo(64);
    }

    @Test
    void autoOnLoopbackChoosesTheLoopbackDatagram() {
        SwitchMLConfig auto = SwitchMLConfig.builder().rank(0).workers(2).controller("127.0.0.1:50099").build();
        SwitchMLConfig resolved = PathSizing.resolve(auto);
        assertThat(resolved.elementsPerPacket()).isEqualTo(PayloadSize.B61440.elements());
        assertThat(resolved.slotsPerThread()).isEqualTo(8);
    }

    @Test
    void explicitValuesAreKept() {
        SwitchMLConfig fixed = SwitchMLConfig.builder().rank(0).workers(2).controller("127.0.0.1:50099")
                .elementsPerPacket(256).slotsPerThread(100).build();
        assertThat(PathSizing.resolve(fixed)).isSameAs(fixed);
        SwitchMLConfig sizeOnly = SwitchMLConfig.builder().rank(0).workers(2).controller("127.0.0.1:50099")
                .elementsPerPacket(256).build();
        assertThat(PathSizing.resolve(sizeOnly).slotsPerThread()).isEqualTo(64);
        assertThat(PathSizing.resolve(sizeOnly).elementsPerPacket()).isEqualTo(256);
    }
}
