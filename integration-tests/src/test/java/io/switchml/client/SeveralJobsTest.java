package io.switchml.client;

import io.switchml.controller.AggregationService;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several jobs on one switch: three jobs with different worker counts, packet sizes, windows and
 * element types run their all-reduces at the same time through one embedded switch, with 1 % of
 * every worker's datagrams lost, and each gets its exact result. Then one job's worker sends, from
 * its own registered socket, well-formed contributions to another job's slots (that job's number)
 * and to slots beyond its own window: the switch drops and counts every one, applies none, and
 * both jobs' next all-reduces are still exact.
 */
class SeveralJobsTest {
    private static final FaultInjection ONE_PERCENT_LOSS = new FaultInjection(0.01, 0, 1, 0, 2021);
    private static final int CRAFTED = 64;

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void concurrentJobsUnderLossAreExactAndCannotTouchEachOthersSlots() throws Exception {
        try (AggregationService service = AggregationService.start(
                new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0);
             // A: 2 workers, 1M floats, 8 KiB packets, 32 slots.
             LocalCluster a = LocalCluster.onSwitch(service, "floats-1m", 2, lossy(b -> b.slotsPerThread(32)));
             // B: 3 workers, 300k floats, 1 KiB packets, 2 threads x 32 slots.
             LocalCluster b = LocalCluster.onSwitch(service, "floats-300k", 3,
                     lossy(c -> c.elementsPerPacket(256).threads(2).slotsPerThread(32)));
             // C: 2 workers, int32.
             LocalCluster c = LocalCluster.onSwitch(service, "ints", 2, lossy(d -> d.elementsPerPacket(1024)))) {
            AggregationSwitch dataplane = service.dataplane();
            JobSpec jobA = installed(dataplane, a);
            JobSpec jobB = installed(dataplane, b);
            assertThat(List.of(jobA.jobNumber(), jobB.jobNumber(), installed(dataplane, c).jobNumber()))
                    .doesNotHaveDuplicates();
            assertThat(dataplane.slotPool().usedSlots()).isEqualTo(32 + 64 + 64);

            ExecutorService jobs = Executors.newFixedThreadPool(3);
            try {
                List<Future<?>> running = List.of(
                        jobs.submit(() -> AllReduceExactnessTest.checkFloatSum(a, 1, 1 << 20, 2048)),
                        jobs.submit(() -> AllReduceExactnessTest.checkFloatSum(b, 2, 300_000, 256)),
                        jobs.submit(() -> AllReduceExactnessTest.checkIntSum(c, 3, 250_000)));
                for (Future<?> job : running) {
                    job.get(60, TimeUnit.SECONDS);
                }
            } finally {
                jobs.shutdownNow();
            }
            for (LocalCluster job : List.of(a, b, c)) {
                assertThat(job.statisticsTotals()[3]).as("datagrams the workers dropped").isPositive();
            }

            Map<String, Long> before = dataplane.counters();
            SwitchMLContext intruder = a.contexts.get(0);
            // Job B's number, B's slots and size, from A's registered socket.
            CraftedPackets.sendAndAwaitDrops(dataplane, intruder, jobB.size(), jobB.jobNumber(), 0, jobB.slots(),
                    CRAFTED, "drops_job_mismatch", 4);
            // A's own number, but slots past A's window: where B's slots would be in a shared array.
            CraftedPackets.sendAndAwaitDrops(dataplane, intruder, jobA.size(), jobA.jobNumber(), jobA.slots(),
                    jobB.slots() - jobA.slots(), CRAFTED, "drops_slot_out_of_range", 5);
            Map<String, Long> after = dataplane.counters();
            assertThat(after.get("contributions")).as("contributions applied").isEqualTo(before.get("contributions"));
            assertThat(after.get("results_sent")).isEqualTo(before.get("results_sent"));

            AllReduceExactnessTest.checkFloatSum(b, 6, 300_000, 256);
            AllReduceExactnessTest.checkFloatSum(a, 7, 100_000, 2048);
            AllReduceExactnessTest.checkIntSum(c, 8, 10_000);
        }
    }

    private static UnaryOperator<SwitchMLConfig.Builder> lossy(UnaryOperator<SwitchMLConfig.Builder> configure) {
        return b -> configure.apply(b.faultInjection(ONE_PERCENT_LOSS));
    }

    private static JobSpec installed(AggregationSwitch dataplane, LocalCluster job) {
        return dataplane.job(job.contexts.get(0).jobNumber()).orElseThrow();
    }
}
