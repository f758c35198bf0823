package io.switchml.udp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which datagrams may share one segmented datagram: the first's length, a shorter last, within the kernel's limits. */
class RunShapeTest {
    private static final int PACKET = 8202;

    @Test
    void datagramsOfTheFirstsLengthJoinAndAShorterOneEndsTheRun() {
        RunShape run = new RunShape();
        assertThat(run.add(PACKET)).isTrue();
        assertThat(run.add(PACKET)).isTrue();
        assertThat(run.add(100)).as("a shorter last one").isTrue();
        assertThat(run.add(PACKET)).as("after a shorter one").isFalse();
        assertThat(run.add(100)).as("after a shorter one, even of its length").isFalse();
        assertThat(run.count()).isEqualTo(3);
        assertThat(run.segmentBytes()).isEqualTo(PACKET);
        assertThat(run.bytes()).isEqualTo(2 * PACKET + 100);
    }

    @Test
    void aLongerDatagramCannotJoinButShortOnesOfOneLengthMakeARun() {
        RunShape run = new RunShape();
        run.add(14); // a packet that carries exponents only
        assertThat(run.add(PACKET)).isFalse();
        assertThat(run.add(14)).isTrue();
        assertThat(run.add(14)).isTrue();
        assertThat(run.count()).isEqualTo(3);
        run.clear();
        assertThat(run.isEmpty()).isTrue();
        assertThat(run.add(PACKET)).isTrue();
        assertThat(run.segmentBytes()).isEqualTo(PACKET);
    }

    @Test
    void aRunStaysWithinOneDatagramAndTheSegmentLimit() {
        RunShape big = new RunShape();
        int fit = UdpOffloads.MAX_DATAGRAM_BYTES / PACKET;
        for (int i = 0; i < fit; i++) {
            assertThat(big.add(PACKET)).isTrue();
        }
        assertThat(big.add(PACKET)).isFalse();
        assertThat(big.add(UdpOffloads.MAX_DATAGRAM_BYTES - big.bytes())).as("a shorter last one that fits").isTrue();
        assertThat(big.bytes()).isEqualTo(UdpOffloads.MAX_DATAGRAM_BYTES);

        RunShape small = new RunShape();
        for (int i = 0; i < UdpOffloads.MAX_SEGMENTS; i++) {
            assertThat(small.add(64)).isTrue();
        }
        assertThat(small.add(64)).isFalse();
    }
}
