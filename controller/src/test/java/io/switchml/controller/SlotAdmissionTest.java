package io.switchml.controller;

import io.grpc.Status;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.SlotPool;
import io.switchml.protocol.PayloadSize;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The admission policy: as asked, a smaller window, or a clear refusal. */
class SlotAdmissionTest {
    private static final long SLOT = JobSpec.slotBytes(PayloadSize.B256, 2);

    /** A pool whose memory holds every slot: the slot counts decide. */
    private static SlotPool pool(int poolSlots, int quota, int used, int jobs) {
        return new SlotPool(poolSlots, quota, used, jobs, (long) poolSlots * SLOT, (long) used * SLOT);
    }

    @Test
    void aTenantGetsWhatItsQuotaLeavesIt() {
        SlotAdmission.Tenant tenant = new SlotAdmission.Tenant("10.0.0.7", 40 * SLOT);
        SlotAdmission.Grant grant = SlotAdmission.grant("t", 2, 64, SLOT, pool(1000, 1000, 0, 0), tenant);
        assertThat(grant.slotsPerThread()).isEqualTo(20);
        assertThat(grant.reason()).contains("its tenant 10.0.0.7 may hold only " + 40 * SLOT + " more bytes");
        assertThatThrownBy(() -> SlotAdmission.grant("t", 2, 64, SLOT, pool(1000, 1000, 0, 0),
                new SlotAdmission.Tenant("10.0.0.7", 10 * SLOT))).hasMessageContaining("--tenant-quota-bytes");
    }

    @Test
    void memoryCanBeWhatDecides() {
        // 1000 free slots of 256 B, but bytes for 100 slots of 60 KiB only: 50 per thread.
        long big = JobSpec.slotBytes(PayloadSize.B61440, 2);
        SlotPool pool = new SlotPool(1000, 1000, 0, 0, 100 * big, 0);
        SlotAdmission.Grant grant = SlotAdmission.grant("m", 2, 512, big, pool);
        assertThat(grant.slotsPerThread()).isEqualTo(50);
        assertThat(grant.reason()).contains("slots of " + big + " bytes", "register memory");
        assertThatThrownBy(() -> SlotAdmission.grant("m", 2, 512, big, new SlotPool(1000, 1000, 0, 0, 10 * big, 0)))
                .hasMessageContaining("--pool-bytes");
    }
    @Test
    void aJobThatFitsGetsWhatItAskedFor() {
        SlotAdmission.Grant grant = SlotAdmission.grant("a", 2, 64, SLOT, pool(1000, 1000, 872, 3));

        assertThat(grant.slotsPerThread()).isEqualTo(64);
        assertThat(grant.reduced()).isFalse();
        assertThat(grant.reason()).isEmpty();
    }

    @Test
    void aJobThatDoesNotFitGetsTheLargestWindowThatDoes() {
        SlotAdmission.Grant grant = SlotAdmission.grant("b", 3, 64, SLOT, pool(1000, 1000, 900, 2));

        assertThat(grant.slotsPerThread()).isEqualTo(33); // 100 free / 3 threads
        assertThat(grant.reason()).contains("job 'b' asks for 3 threads x 64 slots = 192 slots")
                .contains("100 free").contains("it gets 33 slots per thread (99 slots) instead");
    }

    @Test
    void theQuotaBoundsTheWindowEvenWhenThePoolIsFree() {
        SlotAdmission.Grant grant = SlotAdmission.grant("c", 2, 64, SLOT, pool(1000, 50, 0, 0));

        assertThat(grant.slotsPerThread()).isEqualTo(25);
        assertThat(grant.reason()).contains("the per-job quota is 50 slots");
    }

    @Test
    void belowTheMinimumWindowTheJoinIsRefused() {
        assertThatThrownBy(() -> SlotAdmission.grant("d", 2, 64, SLOT, pool(1000, 1000, 985, 4)))
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
        assertThat(SlotAdmission.grant("e", 1, 4, SLOT, pool(10, 10, 6, 1)).slotsPerThread()).isEqualTo(4);
        assertThatThrownBy(() -> SlotAdmission.grant("e", 1, 4, SLOT, pool(10, 10, 7, 1)))
                .hasMessageContaining("not even 4 slots per thread");
    }
}
