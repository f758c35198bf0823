package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.PayloadSize;
import org.junit.jupiter.api.Test;

/** The switch's answer to "whom are you waiting for", read from the bitmap checker and workers counter. */
class MissingRanksTest {
    private static final PayloadSize SIZE = PayloadSize.B128;

    private final SwitchHarness harness = new SwitchHarness();

    @Test
    void ranksWithoutABitInARoundInProgressAreMissing() {
        JobSpec job = harness.install(TestJobs.job(2, 4, SIZE, 4, 1, true));
        assertThat(MissingRanks.of(harness.installed(2))).isEqualTo(new MissingRanks(0, java.util.List.of()));

        int[] values = TestPackets.filled(SIZE.elements(), 1);
        // Slot 0, set 0 (round 0): ranks 0, 1, 3 in, rank 2 missing.
        harness.contributeWithTsi(job, 0, 0, 0, 0, 0, 0, values);
        harness.contributeWithTsi(job, 1, 0, 0, 0, 0, 0, values);
        harness.contributeWithTsi(job, 3, 0, 0, 0, 0, 0, values);
        // Slot 1, set 0: only rank 3 in.
        harness.contributeWithTsi(job, 3, 1, 0, 0, 0, 0, values);
        // Slot 2, set 0: complete; it waits for nobody.
        for (int rank = 0; rank < 4; rank++) {
            harness.contributeWithTsi(job, rank, 2, 0, 0, 0, 0, values);
        }

        MissingRanks missing = MissingRanks.of(harness.installed(2));
        assertThat(missing.incompleteSlots()).isEqualTo(2);
        assertThat(missing.ranks()).containsExactly(0, 1, 2);

        // Rank 2 arrives in slot 0: only slot 1 remains, missing 0, 1 and 2.
        harness.contributeWithTsi(job, 2, 0, 0, 0, 0, 0, values);
        harness.contributeWithTsi(job, 0, 1, 0, 0, 0, 0, values);
        assertThat(MissingRanks.of(harness.installed(2))).isEqualTo(new MissingRanks(1, java.util.List.of(1, 2)));
    }
}
