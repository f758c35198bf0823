package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The aggregation rules of docs/ARCHITECTURE.md section 3, driven through the switch program without sockets. */
class SwitchProgramAggregationTest {
    private static final PayloadSize SIZE = PayloadSize.B128; // 32 elements
    private static final int K = SIZE.elements();

    private final SwitchHarness harness = new SwitchHarness();

    @Test
    void singleWorkerJobCompletesWithItsOwnPacket() {
        JobSpec job = harness.install(TestJobs.job(3, 1, SIZE, 4, 1));
        int[] values = ascending(K, 1);

        NextStep next = harness.contributeWithTsi(job, 0, 2, 1, 0xCAFEBABE, -17, 0, values);

        assertThat(next).isEqualTo(NextStep.MULTICAST);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(1);
        assertThat(sent.get(0).recipient()).isEqualTo(TestJobs.recipient(job, 0, 0));
        AggregationPacket result = sent.get(0).packet();
        assertThat(result.msgType()).isEqualTo(ProtocolConstants.MSG_TYPE_AGGREGATION);
        assertThat(result.sizeCode()).isEqualTo(SIZE.code());
        assertThat(result.jobNumber()).isEqualTo(3);
        assertThat(result.tsi()).isEqualTo(0xCAFEBABE);
        assertThat(result.slot()).isEqualTo(2);
        assertThat(result.set()).isEqualTo(1);
        assertThat(result.exponent0()).isEqualTo(-17);
        assertThat(result.exponent1()).isZero();
        assertThat(sent.get(0).elements()).containsExactly(values);
        assertThat(sent.get(0).bytes()).hasSize(SIZE.packetBytes());
    }

    @Test
    void threeWorkersCompleteOnlyWithTheThirdAndEveryWorkerGetsSumsAndMaxExponents() {
        JobSpec job = harness.install(TestJobs.job(1, 3, SIZE, 4, 1));
        int[] a = ascending(K, 1);
        int[] b = ascending(K, -1000);
        int[] c = TestPackets.filled(K, 7);

        assertThat(harness.contribute(job, 0, 0, 0, 3, 0, a)).isEqualTo(NextStep.CONSUME);
        assertThat(harness.contribute(job, 2, 0, 0, -7, 1, b)).isEqualTo(NextStep.CONSUME);
        assertThat(harness.sink.drain()).isEmpty();
        // e0's maximum comes from rank 1 and e1's from rank 2: the two are kept independently.
        assertThat(harness.contributeWithTsi(job, 1, 0, 0, 99, 5, -4, c)).isEqualTo(NextStep.MULTICAST);

        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).extracting(RecordingSink.Sent::recipient)
                .containsExactlyInAnyOrderElementsOf(TestJobs.recipients(job, 0));
        int[] expected = new int[K];
        for (int i = 0; i < K; i++) {
            expected[i] = a[i] + b[i] + c[i];
        }
        for (RecordingSink.Sent result : sent) {
            assertThat(result.elements()).containsExactly(expected);
            assertThat(result.packet().exponent0()).isEqualTo(5);
            assertThat(result.packet().exponent1()).isEqualTo(1);
            assertThat(result.packet().tsi()).isEqualTo(99);
            assertThat(result.packet().jobNumber()).isEqualTo(1);
        }
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isEqualTo(3);
        assertThat(harness.count(SwitchCounter.RESULTS_SENT)).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.PACKETS_SENT)).isEqualTo(3);
    }

    @Test
    void exponentMaximaAreSigned() {
        JobSpec job = harness.install(TestJobs.job(1, 2, SIZE, 1, 1));
        harness.contribute(job, 0, 0, 0, -126, -5, 1);
        harness.contribute(job, 1, 0, 0, -3, -9, 1);

        AggregationPacket result = harness.sink.drain().get(0).packet();
        assertThat(result.exponent0()).isEqualTo(-3);
        assertThat(result.exponent1()).isEqualTo(-5);
    }

    @Test
    void retransmissionIntoAnIncompleteSlotIsDroppedAndNotAddedTwice() {
        JobSpec job = harness.install(TestJobs.job(1, 3, SIZE, 4, 1));
        harness.contribute(job, 0, 1, 0, 0, 0, TestPackets.filled(K, 10));

        assertThat(harness.contribute(job, 0, 1, 0, 0, 0, TestPackets.filled(K, 10))).isEqualTo(NextStep.DROP);
        assertThat(harness.count(SwitchCounter.RETRANSMISSIONS_DROPPED)).isEqualTo(1);
        assertThat(harness.sink.drain()).isEmpty();

        harness.contribute(job, 1, 1, 0, 0, 0, TestPackets.filled(K, 100));
        harness.contribute(job, 2, 1, 0, 0, 0, TestPackets.filled(K, 1000));
        assertThat(harness.sink.drain()).allSatisfy(result -> assertThat(result.elements()).containsOnly(1110));
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isEqualTo(3);
    }

    @Test
    void retransmissionIntoACompleteSlotGetsTheStoredResultOnlyToItsSender() {
        JobSpec job = harness.install(TestJobs.job(1, 3, SIZE, 4, 1));
        for (int rank = 0; rank < 3; rank++) {
            harness.contribute(job, rank, 3, 1, rank, 0, TestPackets.filled(K, rank + 1));
        }
        harness.sink.drain();

        // The retransmitted payload is ignored: its contribution is already in the sum.
        NextStep next = harness.contributeWithTsi(job, 1, 3, 1, 4242, 1, 0, TestPackets.filled(K, 555));

        assertThat(next).isEqualTo(NextStep.UNICAST);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(1);
        assertThat(sent.get(0).recipient()).isEqualTo(TestJobs.recipient(job, 1, 0));
        assertThat(sent.get(0).elements()).containsOnly(6);
        assertThat(sent.get(0).packet().exponent0()).isEqualTo(2);
        assertThat(sent.get(0).packet().tsi()).isEqualTo(4242);
        assertThat(sent.get(0).packet().slot()).isEqualTo(3);
        assertThat(sent.get(0).packet().set()).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.RETRANSMISSIONS_ANSWERED)).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.RESULTS_SENT)).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isEqualTo(3);
    }

    @Test
    void alternatingSetsFreeTheOtherCopyAndANewRoundOverwrites() {
        JobSpec job = harness.install(TestJobs.job(1, 3, SIZE, 4, 1));
        BitmapChecker seen = harness.installed(1).bitmapChecker();
        completeRound(job, 0, 0, 1);
        assertThat(seen.seen(0, 0, 1)).isTrue();

        harness.contribute(job, 1, 0, 1, 0, 0, TestPackets.filled(K, 20));
        assertThat(seen.seen(0, 0, 1)).as("set 1 frees rank 1's bit in set 0").isFalse();
        assertThat(seen.seen(1, 0, 1)).isTrue();
        harness.contribute(job, 0, 0, 1, 0, 0, TestPackets.filled(K, 20));
        assertThat(harness.contribute(job, 2, 0, 1, 0, 0, TestPackets.filled(K, 20))).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.sink.drain()).hasSize(3).allSatisfy(r -> assertThat(r.elements()).containsOnly(60));

        // Back on set 0: a new round starts from the first packet, not from the old sums (3).
        assertThat(harness.contribute(job, 2, 0, 0, 0, 0, TestPackets.filled(K, 5))).isEqualTo(NextStep.CONSUME);
        harness.contribute(job, 0, 0, 0, 0, 0, TestPackets.filled(K, 5));
        assertThat(harness.contribute(job, 1, 0, 0, 0, 0, TestPackets.filled(K, 5))).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.sink.drain()).hasSize(3).allSatisfy(r -> assertThat(r.elements()).containsOnly(15));
    }

    @Test
    void theOtherCopysResultStaysAvailableUntilItsSenderMovesOn() {
        JobSpec job = harness.install(TestJobs.job(1, 3, SIZE, 4, 1));
        completeRound(job, 2, 0, 4);
        harness.contribute(job, 0, 2, 1, 0, 0, TestPackets.filled(K, 1)); // rank 0 moves to set 1

        // Rank 1 has not moved on, so set 0's result is still there for its retransmission.
        assertThat(harness.contribute(job, 1, 2, 0, 0, 0, TestPackets.filled(K, 0))).isEqualTo(NextStep.UNICAST);
        assertThat(harness.sink.drain()).singleElement().satisfies(r -> {
            assertThat(r.recipient()).isEqualTo(TestJobs.recipient(job, 1, 0));
            assertThat(r.elements()).containsOnly(12);
        });
        // Rank 0's bit in set 0 was freed: its next set-0 packet opens a new round.
        assertThat(harness.contribute(job, 0, 2, 0, 0, 0, TestPackets.filled(K, 9))).isEqualTo(NextStep.CONSUME);
        assertThat(harness.installed(1).workersCounter().remaining(0, 2)).isEqualTo(2);
    }

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {2, 63, 64, 65, 130, 256})
    void seenBitmapSpansAsManyWordsAsWorkers(int workers) {
        JobSpec job = harness.install(TestJobs.job(9, workers, SIZE, 2, 1));
        for (int rank = 0; rank < workers - 1; rank++) {
            assertThat(harness.contribute(job, rank, 1, 0, 0, 0, TestPackets.filled(K, rank + 1)))
                    .as("rank %d", rank).isEqualTo(NextStep.CONSUME);
        }
        // Every rank that has contributed is a retransmission now, in every word of the bitmap.
        for (int rank = 0; rank < workers - 1; rank += Math.max(1, workers / 7)) {
            assertThat(harness.contribute(job, rank, 1, 0, 0, 0, TestPackets.filled(K, 1_000_000)))
                    .as("retransmission of rank %d", rank).isEqualTo(NextStep.DROP);
        }
        assertThat(harness.sink.drain()).isEmpty();

        assertThat(harness.contribute(job, workers - 1, 1, 0, 0, 0, TestPackets.filled(K, workers)))
                .isEqualTo(NextStep.MULTICAST);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).extracting(RecordingSink.Sent::recipient)
                .containsExactlyInAnyOrderElementsOf(TestJobs.recipients(job, 0));
        int sum = workers * (workers + 1) / 2;
        assertThat(sent).allSatisfy(r -> assertThat(r.elements()).containsOnly(sum));

        assertThat(harness.contribute(job, workers - 1, 1, 0, 0, 0, TestPackets.filled(K, 0))).isEqualTo(NextStep.UNICAST);
        assertThat(harness.sink.drain()).singleElement()
                .satisfies(r -> assertThat(r.recipient()).isEqualTo(TestJobs.recipient(job, workers - 1, 0)));
    }

    @Test
    void additionWrapsAroundLikeInt32Registers() {
        JobSpec job = harness.install(TestJobs.job(1, 2, SIZE, 1, 1));
        harness.contribute(job, 0, 0, 0, 0, 0, Integer.MAX_VALUE, Integer.MIN_VALUE, -1);
        harness.contribute(job, 1, 0, 0, 0, 0, 1, -1, Integer.MIN_VALUE);

        int[] sums = harness.sink.drain().get(0).elements();
        assertThat(sums[0]).isEqualTo(Integer.MIN_VALUE);
        assertThat(sums[1]).isEqualTo(Integer.MAX_VALUE);
        assertThat(sums[2]).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void twoJobsSideBySideKeepTheirOwnRegistersAndWorkers() {
        JobSpec small = harness.install(TestJobs.job(1, 2, SIZE, 4, 1));
        JobSpec large = harness.install(TestJobs.job(2, 3, PayloadSize.B1024, 4, 1));

        // Same slot and set in both jobs, interleaved.
        harness.contribute(small, 0, 1, 0, 1, 0, TestPackets.filled(K, 1));
        harness.contribute(large, 0, 1, 0, 2, 0, TestPackets.filled(256, 100));
        harness.contribute(large, 1, 1, 0, 2, 0, TestPackets.filled(256, 100));
        assertThat(harness.contribute(small, 1, 1, 0, 1, 0, TestPackets.filled(K, 1))).isEqualTo(NextStep.MULTICAST);
        List<RecordingSink.Sent> smallResults = harness.sink.drain();
        assertThat(harness.contribute(large, 2, 1, 0, 2, 0, TestPackets.filled(256, 100))).isEqualTo(NextStep.MULTICAST);
        List<RecordingSink.Sent> largeResults = harness.sink.drain();

        assertThat(smallResults).extracting(RecordingSink.Sent::recipient)
                .containsExactlyInAnyOrderElementsOf(TestJobs.recipients(small, 0));
        assertThat(smallResults).allSatisfy(r -> {
            assertThat(r.packet().jobNumber()).isEqualTo(1);
            assertThat(r.elements()).hasSize(K).containsOnly(2);
        });
        assertThat(largeResults).extracting(RecordingSink.Sent::recipient)
                .containsExactlyInAnyOrderElementsOf(TestJobs.recipients(large, 0));
        assertThat(largeResults).allSatisfy(r -> {
            assertThat(r.packet().jobNumber()).isEqualTo(2);
            assertThat(r.elements()).hasSize(256).containsOnly(300);
        });
    }

    @Test
    void resultsOfASlotGoToThePortOfTheWorkerThreadThatOwnsIt() {
        SwitchHarness twoPorts = new SwitchHarness(2);
        JobSpec job = twoPorts.install(TestJobs.job(4, 2, SIZE, 4, 3));
        int slot = 9; // thread 2, arriving on switch port 2 % 2 = 0

        twoPorts.contribute(job, 0, slot, 0, 0, 0, 1);
        twoPorts.contribute(job, 1, slot, 0, 0, 0, 2);

        List<InetSocketAddress> expected = TestJobs.recipients(job, 2);
        assertThat(twoPorts.sink.drain()).extracting(RecordingSink.Sent::recipient)
                .containsExactlyInAnyOrderElementsOf(expected)
                .allSatisfy(address -> assertThat(address.getPort()).isEqualTo(TestJobs.FIRST_WORKER_PORT + 2));
    }

    private void completeRound(JobSpec job, int slot, int set, int value) {
        for (int rank = 0; rank < job.workers(); rank++) {
            harness.contribute(job, rank, slot, set, 0, 0, TestPackets.filled(K, value));
        }
        assertThat(harness.sink.drain()).hasSize(job.workers())
                .allSatisfy(r -> assertThat(r.elements()).containsOnly(value * job.workers()));
    }

    private static int[] ascending(int count, int first) {
        int[] values = new int[count];
        for (int i = 0; i < count; i++) {
            values[i] = first + i;
        }
        return values;
    }
}
