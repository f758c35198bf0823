package io.switchml.controller;

import io.switchml.control.ControllerAddress;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What a leaf's configuration must hold (docs/ARCHITECTURE.md section 9). */
class LeafRoleTest {
    private static final ControllerAddress SPINE = new ControllerAddress("127.0.0.1", 50099);

    @Test
    void aLeafIsOneOfTheLeavesUnderASpine() {
        assertThat(new LeafRole(SPINE, 1, 2, "10.78.1.1").leafIndex()).isEqualTo(1);
        assertThat(new LeafRole(SPINE, 0, 1, null).uplinkAddress()).isNull();
        assertThatThrownBy(() -> new LeafRole(null, 0, 2, null)).hasMessageContaining("--spine HOST:PORT");
        assertThatThrownBy(() -> new LeafRole(SPINE, 2, 2, null)).hasMessageContaining("--leaf-index 2 is outside 0..1");
        assertThatThrownBy(() -> new LeafRole(SPINE, -1, 2, null)).hasMessageContaining("--leaf-index -1");
        assertThatThrownBy(() -> new LeafRole(SPINE, 0, 0, null)).hasMessageContaining("--leaves 0 is outside 1..256");
        assertThatThrownBy(() -> new LeafRole(SPINE, 0, 2, "leaf.example")).hasMessageContaining("not an IPv4 address");
    }
}
