package io.switchml.controller;

import io.grpc.Status;
import io.switchml.dataplane.SlotPool;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The admission policy: as asked, a smaller window, or a clear refusal. */
class SlotAdmissionTest {
    @Test
    void aJobThatFitsGetsWhatItAskedFor() {
        SlotAdmission.Grant grant = SlotAdmission.grant("a", 2, 64, new SlotPool(1000, 1000, 872, 3));

        assertThat(grant.slotsPerThread()).isEqualTo(64);
        assertThat(grant.reduced()).isFalse();
        assertThat(grant.reason()).isEmpty();
    }

    @Test
    void aJobThatDoesNotFitGetsTheLargestWindowThatDoes() {
        SlotAdmission.Grant grant = SlotAdmission.grant("b", 3, 64, new SlotPool(1000, 1000, 900, 2));

        assertThat(grant.slotsPerThread()).isEqualTo(33); // 100 free / 3 threads
        assertThat(grant.reason()).contains("job 'b' asks for 3 threads x 64 slots = 192 slots")
                .contains("100 free").contains("it gets 33 slots per thread (99 slots) instead");
    }

    @Test
    void theQuotaBoundsTheWindowEvenWhenThePoolIsFree() {
        SlotAdmission.Grant grant = SlotAdmission.grant("c", 2, 64, new SlotPool(1000, 50, 0, 0));

        assertThat(grant.slotsPerThread()).isEqualTo(25);
        assertThat(grant.reason()).contains("the per-job quota is 50 slots");
    }

    @Test
    void belowTheMinimumWindowTheJoinIsRefused() {
        assertThatThrownBy(() -> SlotAdmission.grant("d", 2, 64, new SlotPool(1000, 1000, 985, 4)))
                .isInstanceOfSatisfying(ControlException.class,
                        e -> assertThat(e.status().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED))
                .hasMessageContaining("job 'd' asks for 2 threads x 64 slots = 128 slots")
                .hasMessageContaining("pool has 1000 slots, 985 in use by 4 jobs, 15 free")
                .hasMessageContaining("per-job quota is 1000 slots")
                .hasMessageContaining("not even 8 slots per thread (16 slots)")
                .hasMessageContaining("--pool-slots");
    }

    @Test
    void aJobAskingForLessThanTheMinimumMayStillGetAll() {
        assertThat(SlotAdmission.grant("e", 1, 4, new SlotPool(10, 10, 6, 1)).slotsPerThread()).isEqualTo(4);
        assertThatThrownBy(() -> SlotAdmission.grant("e", 1, 4, new SlotPool(10, 10, 7, 1)))
                .hasMessageContaining("not even 4 slots per thread");
    }
}
