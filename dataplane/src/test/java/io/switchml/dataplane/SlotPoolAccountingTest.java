package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.switchml.protocol.PayloadSize;
import org.junit.jupiter.api.Test;

/** The aggregator pool's books: jobs take their slots at installation and give them back at removal. */
class SlotPoolAccountingTest {
    private static final PayloadSize SIZE = PayloadSize.B256;
    private static final long POOL_BYTES = 1L << 30;
    /** One slot of SIZE in a job of up to 64 workers. */
    private static final long SLOT = JobSpec.slotBytes(SIZE, 2);

    private static ControlPlane controlPlane(int poolSlots, int jobQuotaSlots) {
        return new ControlPlane(poolSlots, jobQuotaSlots, POOL_BYTES, SwitchConfig.DEFAULT_ONE_ROUND_STAGING_BYTES);
    }

    private static SlotPool pool(int poolSlots, int quota, int used, int jobs) {
        return new SlotPool(poolSlots, quota, used, jobs, POOL_BYTES, used * SLOT);
    }

    @Test
    void jobsTakeTheirSlotsAndGiveThemBack() {
        ControlPlane controlPlane = controlPlane(100, 100);
        controlPlane.installJob(TestJobs.job(1, 2, SIZE, 20, 2)); // 40 slots
        controlPlane.installJob(TestJobs.job(2, 3, SIZE, 50, 1)); // 50 slots

        assertThat(controlPlane.slotPool()).isEqualTo(pool(100, 100, 90, 2));
        assertThat(controlPlane.slotPool().freeSlots()).isEqualTo(10);

        controlPlane.removeJob(1);
        assertThat(controlPlane.slotPool()).isEqualTo(pool(100, 100, 50, 1));
        controlPlane.removeJob(1); // no longer installed: nothing changes
        controlPlane.removeJob(2);
        assertThat(controlPlane.slotPool()).isEqualTo(pool(100, 100, 0, 0));
    }

    @Test
    void aJobBeyondTheFreePoolIsRefusedAndNothingChanges() {
        ControlPlane controlPlane = controlPlane(100, 100);
        controlPlane.installJob(TestJobs.job(1, 2, SIZE, 60, 1));

        assertThatThrownBy(() -> controlPlane.installJob(TestJobs.job(2, 2, SIZE, 21, 2)))
                .isInstanceOfSatisfying(InsufficientSlotsException.class, e -> {
                    assertThat(e.requestedSlots()).isEqualTo(42);
                    assertThat(e.pool()).isEqualTo(pool(100, 100, 60, 1));
                })
                .hasMessageContaining("job 2 'job-2' asks for 2 threads x 21 slots = 42 slots")
                .hasMessageContaining("pool has 100 slots, 60 in use by 1 job, 40 free")
                .hasMessageContaining("quota is 100 slots");
        assertThat(controlPlane.job(2)).isEmpty();
        assertThat(controlPlane.slotPool().usedSlots()).isEqualTo(60);

        controlPlane.installJob(TestJobs.job(2, 2, SIZE, 20, 2)); // exactly the 40 free slots
        assertThat(controlPlane.slotPool().freeSlots()).isZero();
    }

    @Test
    void aJobBeyondTheQuotaIsRefusedEvenWithAFreePool() {
        ControlPlane controlPlane = controlPlane(1000, 64);

        assertThatThrownBy(() -> controlPlane.installJob(TestJobs.job(1, 2, SIZE, 65, 1)))
                .isInstanceOf(InsufficientSlotsException.class)
                .hasMessageContaining("quota is 64 slots");
        controlPlane.installJob(TestJobs.job(1, 2, SIZE, 64, 1));
        assertThat(controlPlane.slotPool().grantableSlots()).isEqualTo(64);
    }

    @Test
    void aRefusalForAnotherReasonTakesNoSlots() {
        ControlPlane controlPlane = controlPlane(100, 100);
        controlPlane.installJob(TestJobs.job(1, 2, SIZE, 10, 1));

        assertThatThrownBy(() -> controlPlane.installJob(TestJobs.job(1, 2, SIZE, 10, 1)))
                .isInstanceOf(IllegalStateException.class);
        assertThat(controlPlane.slotPool()).isEqualTo(pool(100, 100, 10, 1));
    }

    @Test
    void registerMemoryIsChargedInBytesSoLargePacketsCannotExhaustTheHeap() {
        // 60 KiB packets: 16 384 slots would be 2 GiB; a pool of 64 MiB holds 534 of them.
        long slot60k = JobSpec.slotBytes(PayloadSize.B61440, 4);
        ControlPlane controlPlane = new ControlPlane(1 << 20, 1 << 20, 64L << 20, 0);
        assertThatThrownBy(() -> controlPlane.installJob(TestJobs.job(1, 4, PayloadSize.B61440, 16_384, 1)))
                .isInstanceOf(InsufficientSlotsException.class)
                .hasMessageContaining("bytes of register memory (--pool-bytes)");
        assertThat(controlPlane.job(1)).isEmpty();
        assertThat(controlPlane.slotPool().grantableSlots(slot60k)).isEqualTo((int) ((64L << 20) / slot60k));

        JobSpec fits = TestJobs.job(1, 4, PayloadSize.B61440, 256, 1);
        controlPlane.installJob(fits);
        assertThat(controlPlane.slotPool().usedBytes()).isEqualTo(fits.memoryBytes()).isEqualTo(256 * slot60k);
        controlPlane.removeJob(1);
        assertThat(controlPlane.slotPool().usedBytes()).isZero();
    }
}
