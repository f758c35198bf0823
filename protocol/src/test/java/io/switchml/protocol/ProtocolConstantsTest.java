package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ProtocolConstantsTest {

    @Test
    void wireNumbersAreSwitchMls() {
        assertThat(ProtocolConstants.MSG_TYPE_AGGREGATION).isEqualTo(1);
        assertThat(ProtocolConstants.SWITCH_UDP_PORT).isEqualTo(48864);
        // 0xBEE0..0xBEEF
        assertThat(ProtocolConstants.SWITCH_UDP_PORT + ProtocolConstants.SWITCH_UDP_PORT_COUNT - 1).isEqualTo(0xBEEF);
        assertThat(ProtocolConstants.CONTROLLER_TCP_PORT).isEqualTo(50099);
    }

    @Test
    void headerLayoutSizes() {
        assertThat(ProtocolConstants.HEADER_BYTES).isEqualTo(8);
        assertThat(ProtocolConstants.EXPONENT_BYTES).isEqualTo(2);
        assertThat(ProtocolConstants.PAYLOAD_OFFSET).isEqualTo(10);
    }

    @Test
    void poolIndexBits() {
        assertThat(ProtocolConstants.MAX_SLOTS).isEqualTo(16384);
        assertThat(ProtocolConstants.MAX_SLOTS - 1).isEqualTo(0x3FFF);
        assertThat(ProtocolConstants.SET_BIT).isEqualTo(0x8000);
        // Slot and set bits do not overlap, and both fit 16 bits.
        assertThat((ProtocolConstants.MAX_SLOTS - 1) & ProtocolConstants.SET_BIT).isZero();
        assertThat(((ProtocolConstants.MAX_SLOTS - 1) | ProtocolConstants.SET_BIT) & ~0xFFFF).isZero();
    }

    @Test
    void limits() {
        assertThat(ProtocolConstants.MAX_WORKERS).isEqualTo(256);
        assertThat(ProtocolConstants.MAX_JOBS).isEqualTo(256);
        // The worst case of the quantized n-way sum fits an int.
        assertThat((long) ProtocolConstants.MAX_WORKERS * BlockQuantizer.maxTerm(ProtocolConstants.MAX_WORKERS))
                .isLessThanOrEqualTo(Integer.MAX_VALUE);
    }
}
