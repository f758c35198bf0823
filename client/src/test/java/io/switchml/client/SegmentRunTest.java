package io.switchml.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which packets may share one segmented datagram: consecutive slots, full-size but the last, within the kernel's limits. */
class SegmentRunTest {
    private static final int PACKET = 8224;

    @Test
    void consecutiveFullPacketsJoinAndAShortOneEndsTheRun() {
        SegmentRun run = new SegmentRun(PACKET);
        assertThat(run.add(3, PACKET)).isTrue();
        assertThat(run.add(4, PACKET)).isTrue();
        assertThat(run.add(5, 100)).isTrue();
        assertThat(run.add(6, PACKET)).as("after a short packet").isFalse();
        assertThat(run.first()).isEqualTo(3);
        assertThat(run.count()).isEqualTo(3);
        assertThat(run.bytes()).isEqualTo(2 * PACKET + 100);
    }

    @Test
    void aSlotOutOfOrderStartsAnotherRun() {
        SegmentRun run = new SegmentRun(PACKET);
        run.add(7, PACKET);
        assertThat(run.add(9, PACKET)).isFalse();
        assertThat(run.add(7, PACKET)).as("the same slot again").isFalse();
        assertThat(run.count()).isEqualTo(1);
        run.clear();
        assertThat(run.isEmpty()).isTrue();
        assertThat(run.add(9, PACKET)).isTrue();
        assertThat(run.first()).isEqualTo(9);
    }

    @Test
    void aRunStaysWithinOneDatagramAndTheSegmentLimit() {
        SegmentRun big = new SegmentRun(PACKET);
        int fit = SegmentRun.MAX_BYTES / PACKET;
        for (int slot = 0; slot < fit; slot++) {
            assertThat(big.add(slot, PACKET)).isTrue();
        }
        assertThat(big.add(fit, PACKET)).isFalse();
        assertThat(big.bytes()).isLessThanOrEqualTo(SegmentRun.MAX_BYTES);

        SegmentRun small = new SegmentRun(64);
        for (int slot = 0; slot < SegmentRun.MAX_SEGMENTS; slot++) {
            assertThat(small.add(slot, 64)).isTrue();
        }
        assertThat(small.add(SegmentRun.MAX_SEGMENTS, 64)).isFalse();
    }
}
