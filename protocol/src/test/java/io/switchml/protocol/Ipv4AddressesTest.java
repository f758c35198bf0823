package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class Ipv4AddressesTest {
    @Test
    void anAddressIsItsFourBytesInNetworkOrder() {
        assertThat(Ipv4Addresses.toInt(new byte[]{127, 0, 0, 1})).isEqualTo(0x7F000001);
        assertThat(Ipv4Addresses.toInt(new byte[]{(byte) 192, (byte) 168, (byte) 129, (byte) 254})).isEqualTo(0xC0A881FE);
        assertThatThrownBy(() -> Ipv4Addresses.toInt(new byte[16])).hasMessageContaining("4 bytes, not 16");
    }
}
