package io.switchml.controller;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.Inet4Address;
import java.net.InetAddress;

import static org.assertj.core.api.Assertions.assertThat;

class JoinValidatorTest {

    @Test
    void dottedIpv4AddressesAreParsed() throws Exception {
        assertThat(JoinValidator.ipv4("127.0.0.1")).isEqualTo(InetAddress.getByName("127.0.0.1"));
        assertThat(JoinValidator.ipv4("0.0.0.0")).isInstanceOf(Inet4Address.class);
        assertThat(JoinValidator.ipv4("255.255.255.255")).isEqualTo(InetAddress.getByName("255.255.255.255"));
        assertThat(JoinValidator.ipv4("10.1.2.3").getAddress()).containsExactly(10, 1, 2, 3);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.0.0.0", "0.1.2.3", "255.255.255.255", "224.0.0.1", "239.255.255.250", "240.0.0.1",
            "255.255.255.254"})
    void broadcastMulticastUnspecifiedAndReservedAddressesAreNoWorkers(String text) {
        assertThat(JoinValidator.notUnicast(JoinValidator.ipv4(text))).isNotNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "10.0.0.5", "10.1.2.255", "192.168.1.1", "223.255.255.1", "1.0.0.0"})
    void unicastAddressesAreWorkers(String text) {
        // 10.1.2.255 ends in 255 yet is a host of a network wider than /24: only known broadcasts are refused.
        assertThat(JoinValidator.notUnicast(JoinValidator.ipv4(text))).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "localhost", "not-an-ip", "::1", "::ffff:127.0.0.1", "1.2.3", "1.2.3.4.5", "256.0.0.1",
            "1.2.3.999", " 1.2.3.4", "1.2.3.4 ", "1.2.3.-4", "1.2.3.4/24", "0x7f.0.0.1"})
    void anythingElseIsNotAnIpv4Address(String text) {
        assertThat(JoinValidator.ipv4(text)).isNull();
    }
}
