package io.switchml.client;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.switchml.api.ControlPlaneException;
import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Admission control end to end: jobs take slots from the switch's aggregator pool; one that does not
 * fit gets a smaller window and still computes exact results, or is refused with a clear error;
 * slots come back when a job ends or is aborted.
 */
class AdmissionTest {
    private static final int K = 256;

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aJobThatDoesNotFitGetsASmallerWindowOrARefusalAndSlotsComeBackWhenAJobEnds() {
        try (AggregationService service = start(new SwitchConfig().poolSlots(256))) {
            AggregationSwitch dataplane = service.dataplane();
            LocalCluster first = LocalCluster.onSwitch(service, "first", 2, window(2, 64));
            try (LocalCluster second = LocalCluster.onSwitch(service, "second", 2, window(2, 128))) {
                assertThat(first.contexts.get(0).slotsPerThread()).isEqualTo(64);
                // Asked for 2 x 128 = 256 slots with 128 free: 64 per thread.
                for (SwitchMLContext context : second.contexts) {
                    assertThat(context.config().slotsPerThread()).isEqualTo(128);
                    assertThat(context.slotsPerThread()).isEqualTo(64);
                }
                JobSpec installed = dataplane.job(second.contexts.get(0).jobNumber()).orElseThrow();
                assertThat(installed.slots()).isEqualTo(128);
                assertThat(dataplane.slotPool().freeSlots()).isZero();
                AllReduceExactnessTest.checkFloatSum(second, 1, 100_000, K);
                AllReduceExactnessTest.checkIntSum(second, 2, 50_001);
                // The job's window is what it was granted: slots of the window it asked for are refused.
                CraftedPackets.sendAndAwaitDrops(dataplane, second.contexts.get(0), installed.size(),
                        installed.jobNumber(), 128, 128, 16, "drops_slot_out_of_range", 3);
                AllReduceExactnessTest.checkFloatSum(second, 4, 100_000, K);

                assertThatThrownBy(() -> join(service, "third", window(1, 8)))
                        .isInstanceOf(ControlPlaneException.class)
                        .hasMessageContaining("job 'third' asks for 1 threads x 8 slots = 8 slots")
                        .hasMessageContaining("the switch's aggregator pool has 256 slots, 256 in use by 2 jobs, 0 free")
                        .hasMessageContaining("the per-job quota is 256 slots")
                        .hasCauseInstanceOf(StatusRuntimeException.class)
                        .satisfies(e -> assertThat(Status.fromThrowable(e.getCause()).getCode())
                                .isEqualTo(Status.Code.RESOURCE_EXHAUSTED));

                first.close(); // every rank leaves: its 128 slots come back
                assertThat(dataplane.slotPool().usedSlots()).isEqualTo(128);
                try (SwitchMLContext third = join(service, "third", window(1, 8))) {
                    assertThat(third.slotsPerThread()).isEqualTo(8);
                    assertThat(dataplane.slotPool().usedSlots()).isEqualTo(136);
                }
            } finally {
                first.close();
            }
            assertThat(dataplane.slotPool().usedSlots()).isZero();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theQuotaGivesABigJobASmallerWindowEvenWhenThePoolIsFree() {
        try (AggregationService service = start(new SwitchConfig().poolSlots(4096).jobQuotaSlots(48));
             SwitchMLContext big = join(service, "big", window(2, 64))) {
            assertThat(big.slotsPerThread()).isEqualTo(24);
            float[] x = TestTensors.floats(9, 0, 100_000);
            float[] out = new float[x.length];
            big.allReduce(x, out, ReduceOp.SUM);
            assertThat(out).isEqualTo(ReferenceAllReduce.floats(new float[][]{x}, K, ReduceOp.SUM));
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void slotsComeBackWhenAJobIsAbortedBecauseAWorkerDied() {
        try (AggregationService service = start(new SwitchConfig().poolSlots(128))) {
            AggregationSwitch dataplane = service.dataplane();
            try (LocalCluster victim = LocalCluster.onSwitch(service, "victim", 2, window(1, 128))) {
                assertThat(dataplane.slotPool().freeSlots()).isZero();
                victim.contexts.get(1).abandon();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (dataplane.slotPool().usedSlots() > 0 && System.nanoTime() < deadline) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
                assertThat(dataplane.slotPool().usedSlots()).as("slots held after the abort").isZero();
            }
            try (SwitchMLContext next = join(service, "next", window(1, 128))) {
                assertThat(next.slotsPerThread()).isEqualTo(128);
            }
        }
    }

    /** Without tenant shares: these jobs, all of one tenant (loopback), are to fill the pool (FairShareTest has the shares). */
    private static AggregationService start(SwitchConfig config) {
        return AggregationService.start(config.bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0,
                new ControllerSecurity().tenantShare(1));
    }

    private static UnaryOperator<SwitchMLConfig.Builder> window(int threads, int slotsPerThread) {
        return b -> b.elementsPerPacket(K).threads(threads).slotsPerThread(slotsPerThread);
    }

    /** One worker alone in its job. */
    private static SwitchMLContext join(AggregationService service, String job, UnaryOperator<SwitchMLConfig.Builder> configure) {
        return SwitchMLContext.connect(configure.apply(SwitchMLConfig.builder()
                .controller("127.0.0.1:" + service.controllerPort()).job(job).rank(0).workers(1)
                .joinTimeout(Duration.ofSeconds(10))
                .elementsPerPacket(TestDefaults.ELEMENTS_PER_PACKET).slotsPerThread(TestDefaults.SLOTS_PER_THREAD)).build());
    }
}
