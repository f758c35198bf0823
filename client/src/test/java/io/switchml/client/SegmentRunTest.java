package io.switchml.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Which of a burst's packets share one segmented datagram: packets of one length in whichever slots (the rule is
 * {@code RunShape}'s, tested in the udp module), remembered in the order they were sent.
 */
class SegmentRunTest {
    private static final int PACKET = 8202;

    @Test
    void packetsOfOneLengthJoinInWhicheverSlotsTheySit() {
        SegmentRun run = new SegmentRun();
        assertThat(run.add(7, PACKET)).isTrue();
        assertThat(run.add(3, PACKET)).isTrue();
        assertThat(run.add(12, 100)).isTrue();
        assertThat(run.add(13, PACKET)).as("after a shorter one").isFalse();
        assertThat(run.count()).isEqualTo(3);
        assertThat(new int[]{run.slot(0), run.slot(1), run.slot(2)}).containsExactly(7, 3, 12);
        assertThat(run.segmentBytes()).isEqualTo(PACKET);
        assertThat(run.bytes()).isEqualTo(2 * PACKET + 100);
        assertThat(new int[]{run.length(0), run.length(1), run.length(2)}).containsExactly(PACKET, PACKET, 100);
    }

    @Test
    void aWindowsFirstPacketsWhichCarryExponentsOnlyMakeARunToo() {
        SegmentRun run = new SegmentRun();
        for (int slot = 0; slot < 8; slot++) {
            assertThat(run.add(slot, 14)).isTrue();
        }
        assertThat(run.add(8, PACKET)).as("a longer packet").isFalse();
        assertThat(run.count()).isEqualTo(8);
        run.clear();
        assertThat(run.isEmpty()).isTrue();
        assertThat(run.add(8, PACKET)).isTrue();
        assertThat(run.slot(0)).isEqualTo(8);
    }
}
