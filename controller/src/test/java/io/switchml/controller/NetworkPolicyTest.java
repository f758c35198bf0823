package io.switchml.controller;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.UnknownHostException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NetworkPolicyTest {
    private static InetAddress ip(String literal) throws UnknownHostException {
        return InetAddress.getByName(literal);
    }

    @Test
    void subnetsMatchByPrefix() throws UnknownHostException {
        NetworkPolicy policy = NetworkPolicy.parse("--switchml-sessions", "10.1.0.0/16, 192.168.7.9/32,fd00::/8");
        assertThat(policy.allows(ip("10.1.200.3"))).isTrue();
        assertThat(policy.allows(ip("10.2.0.1"))).isFalse();
        assertThat(policy.allows(ip("192.168.7.9"))).isTrue();
        assertThat(policy.allows(ip("192.168.7.8"))).isFalse();
        assertThat(policy.allows(ip("fd12::1"))).isTrue();
        assertThat(policy.allows(ip("fe80::1"))).isFalse();
        assertThat(policy.allows(null)).as("an unknown peer").isFalse();
        assertThat(policy.off()).isFalse();
    }

    @Test
    void onAndOff() throws UnknownHostException {
        assertThat(NetworkPolicy.parse("--switchml-sessions", "on").allows(ip("8.8.8.8"))).isTrue();
        assertThat(NetworkPolicy.parse("--switchml-sessions", "OFF").allows(ip("127.0.0.1"))).isFalse();
        assertThat(NetworkPolicy.parse("--switchml-sessions", "off").off()).isTrue();
    }

    @Test
    void badListsAreRefusedWithTheItem() {
        assertThatThrownBy(() -> NetworkPolicy.parse("--switchml-sessions", "10.0.0.0/33")).hasMessageContaining("/33");
        assertThatThrownBy(() -> NetworkPolicy.parse("--switchml-sessions", "example.com/8")).hasMessageContaining("example.com/8");
        assertThatThrownBy(() -> NetworkPolicy.parse("--switchml-sessions", "")).hasMessageContaining("off, on");
    }
}
