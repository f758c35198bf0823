package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.AggregationPacket;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The switch benchmark's invocations are valid contributions that complete slots with the right sums. */
class SwitchProgramBenchmarkTest {
    private static final int SLOTS = SwitchProgramBenchmark.SLOTS;

    @ParameterizedTest
    @CsvSource({"2, 64, scalar", "2, 256, array", "2, 15360, vector", "8, 64, vector", "8, 256, scalar", "8, 15360, array"})
    void everyNthPacketCompletesASlotWithTheSum(int workers, int elements, String kernels) {
        SwitchProgramBenchmark bench = new SwitchProgramBenchmark();
        bench.workers = workers;
        bench.elements = elements;
        bench.kernels = kernels;
        bench.setUp();
        SwitchProgramBenchmark.Elements carried = new SwitchProgramBenchmark.Elements();

        // Round 0 on set 0, then round 1 on set 1: the second passes the round checker too.
        for (int round = 0; round < 2; round++) {
            for (int slot = 0; slot < SLOTS; slot++) {
                for (int rank = 0; rank < workers; rank++) {
                    NextStep expected = rank == workers - 1 ? NextStep.MULTICAST : NextStep.CONSUME;
                    assertThat(bench.process(carried)).as("round %d slot %d rank %d", round, slot, rank)
                            .isEqualTo(expected);
                }
                if (round == 0) {
                    assertSum(bench, slot, workers, elements);
                }
            }
        }

        long packets = 2L * SLOTS * workers;
        assertThat(bench.counters.get(SwitchCounter.CONTRIBUTIONS)).isEqualTo(packets);
        assertThat(bench.counters.get(SwitchCounter.RESULTS_SENT)).isEqualTo(2L * SLOTS);
        assertThat(bench.sent).isEqualTo(2L * SLOTS * workers);
        assertThat(carried.elements).isEqualTo(packets * elements);
        bench.copy(carried);
        assertThat(bench.copied).hasSize(elements * Integer.BYTES);
        for (DropReason reason : DropReason.values()) {
            assertThat(bench.counters.get(reason)).as("%s", reason).isZero();
        }
    }

    /** The completing packet was rewritten into the result: the sums and the maximum exponent. */
    private static void assertSum(SwitchProgramBenchmark bench, int slot, int workers, int elements) {
        AggregationPacket result = new AggregationPacket().wrap(bench.packets[slot][workers - 1], 0);
        assertThat(result.exponent0()).isEqualTo(workers - 1 - 20);
        for (int i = 0; i < elements; i++) {
            int sum = 0;
            for (int rank = 0; rank < workers; rank++) {
                sum += SwitchProgramBenchmark.value(slot, rank, i);
            }
            assertThat(result.element(i)).as("slot %d element %d", slot, i).isEqualTo(sum);
        }
    }
}
