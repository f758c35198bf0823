package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class PayloadSizeTest {

    /** The largest UDP payload of an IPv4 datagram: 65535 - 20 (IP) - 8 (UDP). */
    private static final int MAX_UDP_PAYLOAD = 65507;
    /** UDP payload in a 9000-byte jumbo frame: 9000 - 20 (IP) - 8 (UDP). */
    private static final int JUMBO_UDP_PAYLOAD = 9000 - 20 - 8;
    /** UDP payload in a standard 1500-byte Ethernet frame. */
    private static final int STANDARD_UDP_PAYLOAD = 1500 - 20 - 8;

    @Test
    void codesMapToTheirByteCounts() {
        int[] expectedBytes = {128, 256, 512, 1024, 2048, 4096, 8192, 61440};
        assertThat(PayloadSize.values()).hasSize(8);
        for (int code = 0; code < 8; code++) {
            PayloadSize s = PayloadSize.ofCode(code);
            assertThat(s).as("code %d", code).isNotNull();
            assertThat(s.code()).isEqualTo(code);
            assertThat(s.bytes()).as("code %d", code).isEqualTo(expectedBytes[code]);
            assertThat(s.elements()).isEqualTo(expectedBytes[code] / 4);
            assertThat(s.packetBytes()).isEqualTo(expectedBytes[code] + 10);
        }
    }

    @Test
    void switchMlHardwareCodesAreThePaperOnes() {
        // SwitchML's Tofino program takes code 1 (64 int32) and code 3 (256 int32).
        assertThat(PayloadSize.ofCode(1)).isSameAs(PayloadSize.B256);
        assertThat(PayloadSize.B256.elements()).isEqualTo(64);
        assertThat(PayloadSize.ofCode(3)).isSameAs(PayloadSize.B1024);
        assertThat(PayloadSize.B1024.elements()).isEqualTo(256);
    }

    @Test
    void ofCodeOfEveryConstantIsItself() {
        for (PayloadSize s : PayloadSize.values()) {
            assertThat(PayloadSize.ofCode(s.code())).isSameAs(s);
        }
        Set<Integer> codes = Arrays.stream(PayloadSize.values()).map(PayloadSize::code).collect(Collectors.toSet());
        assertThat(codes).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6, 7);
    }

    @Test
    void codesOutsideThreeBitsHaveNoSize() {
        assertThat(PayloadSize.ofCode(-1)).isNull();
        assertThat(PayloadSize.ofCode(8)).isNull();
        assertThat(PayloadSize.ofCode(Integer.MAX_VALUE)).isNull();
        assertThat(PayloadSize.ofCode(Integer.MIN_VALUE)).isNull();
    }

    @Test
    void ofElementsFindsEverySize() {
        for (PayloadSize s : PayloadSize.values()) {
            assertThat(PayloadSize.ofElements(s.elements())).isSameAs(s);
        }
        assertThat(PayloadSize.ofElements(64)).isSameAs(PayloadSize.B256);
        assertThat(PayloadSize.ofElements(15360)).isSameAs(PayloadSize.B61440);
    }

    @Test
    void ofElementsRejectsOtherCountsAndListsTheChoices() {
        for (int bad : new int[] {0, -1, 1, 31, 33, 63, 100, 4096, 15359, 15361, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
            assertThatThrownBy(() -> PayloadSize.ofElements(bad))
                    .as("elements %d", bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("32, 64, 128, 256, 512, 1024, 2048, 15360")
                    .hasMessageEndingWith("not " + bad);
        }
    }

    @Property(tries = 300)
    void ofElementsAcceptsExactlyTheEightCounts(@ForAll int elements) {
        boolean valid = Arrays.stream(PayloadSize.values()).anyMatch(s -> s.elements() == elements);
        if (valid) {
            assertThat(PayloadSize.ofElements(elements).elements()).isEqualTo(elements);
        } else {
            assertThatThrownBy(() -> PayloadSize.ofElements(elements)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void everyPacketFitsOneUdpDatagram() {
        for (PayloadSize s : PayloadSize.values()) {
            assertThat(s.packetBytes()).as("%s", s).isLessThanOrEqualTo(MAX_UDP_PAYLOAD);
        }
        // B61440 is the largest multiple of 4 KiB that fits: one more 4 KiB would not.
        assertThat(PayloadSize.B61440.bytes() % 4096).isZero();
        assertThat(PayloadSize.B61440.packetBytes() + 4096).isGreaterThan(MAX_UDP_PAYLOAD);
    }

    @Test
    void the8KiBSizeFitsAJumboFrame() {
        assertThat(PayloadSize.B8192.packetBytes()).isEqualTo(8202).isLessThanOrEqualTo(JUMBO_UDP_PAYLOAD);
        // And the SwitchML sizes fit an ordinary 1500-byte frame.
        assertThat(PayloadSize.B1024.packetBytes()).isLessThanOrEqualTo(STANDARD_UDP_PAYLOAD);
        assertThat(PayloadSize.B2048.packetBytes()).isGreaterThan(STANDARD_UDP_PAYLOAD);
    }

    @Test
    void sizesGrowWithTheirCode() {
        PayloadSize[] all = PayloadSize.values();
        for (int i = 1; i < all.length; i++) {
            assertThat(all[i].bytes()).isGreaterThan(all[i - 1].bytes());
            assertThat(all[i].bytes() % Integer.BYTES).isZero();
        }
    }
}
