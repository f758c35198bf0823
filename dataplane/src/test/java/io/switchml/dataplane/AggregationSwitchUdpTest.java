package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.switchml.protocol.PayloadSize;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The switch over real UDP sockets on the loopback interface. */
class AggregationSwitchUdpTest {
    private static final Duration ARRIVAL = Duration.ofSeconds(5);
    /** How long to listen before concluding that nothing comes. */
    private static final Duration SILENCE = Duration.ofMillis(150);

    @ParameterizedTest(name = "native transport {0}")
    @ValueSource(booleans = {true, false})
    void everyWorkerGetsTheSumsFromTheSwitchPortOfItsThread(boolean nativeTransport) {
        try (AggregationSwitch aggregationSwitch = startOnLoopback(2, nativeTransport);
             LoopbackWorkers workers = new LoopbackWorkers(3, 2)) {
            int[] switchPorts = aggregationSwitch.ports();
            assertThat(switchPorts).hasSize(2).doesNotContain(0);
            assertThat(switchPorts[0]).isNotEqualTo(switchPorts[1]);
            // Slots 0-1 belong to thread 0 (switch port 0), slots 2-3 to thread 1 (switch port 1).
            JobSpec job = new JobSpec(1, "loopback", PayloadSize.B256, 2, 2, workers.endpoints(), false);
            aggregationSwitch.installJob(job);
            assertThat(aggregationSwitch.job(1)).contains(job);

            for (int slot = 0; slot < 4; slot++) {
                int thread = slot / 2;
                for (int rank = 0; rank < 3; rank++) {
                    workers.send(rank, thread, switchPorts[thread],
                            TestPackets.packet(job.size(), 1, slot, slot, 0, rank, 0, TestPackets.filled(64, (rank + 1) * (slot + 1))));
                }
            }

            for (int rank = 0; rank < 3; rank++) {
                for (int thread = 0; thread < 2; thread++) {
                    int[] slotsSeen = new int[2];
                    for (int n = 0; n < 2; n++) {
                        LoopbackWorkers.Received result = workers.receive(rank, thread, ARRIVAL);
                        assertThat(result).as("result %d of worker %d thread %d", n, rank, thread).isNotNull();
                        assertThat(result.from()).isEqualTo(new InetSocketAddress(LoopbackWorkers.LOOPBACK, switchPorts[thread]));
                        int slot = TestPackets.wrap(result.bytes()).slot();
                        assertThat(slot / 2).isEqualTo(thread);
                        assertThat(result.elements()).containsOnly(6 * (slot + 1));
                        assertThat(TestPackets.wrap(result.bytes()).exponent0()).isEqualTo(2);
                        slotsSeen[n] = slot;
                    }
                    assertThat(slotsSeen).containsExactlyInAnyOrder(2 * thread, 2 * thread + 1);
                }
            }

            // A retransmission into a complete slot is answered to its sender alone.
            workers.send(2, 1, switchPorts[1], TestPackets.packet(job.size(), 1, 77, 3, 0, 0, 0));
            LoopbackWorkers.Received again = workers.receive(2, 1, ARRIVAL);
            assertThat(again).isNotNull();
            assertThat(again.elements()).containsOnly(24);
            assertThat(TestPackets.wrap(again.bytes()).tsi()).isEqualTo(77);
            assertThat(workers.receive(0, 1, SILENCE)).isNull();

            Map<String, Long> counters = aggregationSwitch.counters();
            assertThat(counters).containsEntry("packets_received", 13L).containsEntry("results_sent", 4L)
                    .containsEntry("packets_sent", 13L).containsEntry("retransmissions_answered", 1L)
                    .containsEntry("contributions", 12L);
        }
    }

    @Test
    void largestPayloadFitsTheReceiveBuffers() {
        try (AggregationSwitch aggregationSwitch = startOnLoopback(1, true);
             LoopbackWorkers workers = new LoopbackWorkers(2, 1)) {
            PayloadSize size = PayloadSize.B61440;
            aggregationSwitch.installJob(new JobSpec(3, "jumbo", size, 1, 1, workers.endpoints(), false));
            int[] ascending = new int[size.elements()];
            for (int i = 0; i < ascending.length; i++) {
                ascending[i] = i;
            }

            workers.send(0, 0, aggregationSwitch.ports()[0], TestPackets.packet(size, 3, 1, 0, 0, 0, 0, ascending));
            workers.send(1, 0, aggregationSwitch.ports()[0], TestPackets.packet(size, 3, 1, 0, 0, 0, 0, ascending));

            for (int rank = 0; rank < 2; rank++) {
                LoopbackWorkers.Received result = workers.receive(rank, 0, ARRIVAL);
                assertThat(result).isNotNull();
                assertThat(result.bytes()).hasSize(size.packetBytes());
                int[] sums = result.elements();
                assertThat(sums[0]).isZero();
                assertThat(sums[size.elements() - 1]).isEqualTo(2 * (size.elements() - 1));
            }
        }
    }

    @Test
    void ingressDropSimulatorCanBeTurnedOffWhileRunning() {
        try (AggregationSwitch aggregationSwitch = AggregationSwitch.start(new SwitchConfig()
                .bindAddress("127.0.0.1").basePort(0).allowFaultInjection(true).ingressDropProbability(1.0));
             LoopbackWorkers workers = new LoopbackWorkers(2, 1)) {
            int port = aggregationSwitch.ports()[0];
            JobSpec job = new JobSpec(1, "lossy", PayloadSize.B128, 1, 1, workers.endpoints(), false);
            aggregationSwitch.installJob(job);

            workers.send(0, 0, port, TestPackets.packet(job.size(), 1, 1, 0, 0, 0, 0, 5));
            workers.send(1, 0, port, TestPackets.packet(job.size(), 1, 1, 0, 0, 0, 0, 6));
            awaitCounter(aggregationSwitch, "ingress_simulated_drops", 2);
            assertThat(workers.receive(0, 0, SILENCE)).isNull();

            aggregationSwitch.setDropProbabilities(0.0, 0.0);
            workers.send(0, 0, port, TestPackets.packet(job.size(), 1, 2, 0, 0, 0, 0, 5));
            workers.send(1, 0, port, TestPackets.packet(job.size(), 1, 2, 0, 0, 0, 0, 6));
            for (int rank = 0; rank < 2; rank++) {
                LoopbackWorkers.Received result = workers.receive(rank, 0, ARRIVAL);
                assertThat(result).isNotNull();
                assertThat(result.elements()[0]).isEqualTo(11);
            }
            assertThat(aggregationSwitch.counters()).containsEntry("contributions", 2L);
        }
    }

    @Test
    void packetFromAnUnknownSourceIsCountedAsADrop() throws Exception {
        try (AggregationSwitch aggregationSwitch = startOnLoopback(1, true);
             LoopbackWorkers workers = new LoopbackWorkers(1, 1);
             LoopbackWorkers stranger = new LoopbackWorkers(1, 1)) {
            aggregationSwitch.installJob(new JobSpec(1, "job", PayloadSize.B128, 1, 1, workers.endpoints(), false));

            stranger.send(0, 0, aggregationSwitch.ports()[0], TestPackets.packet(PayloadSize.B128, 1, 1, 0, 0, 0, 0, 5));

            awaitCounter(aggregationSwitch, "drops_unknown_source", 1);
            assertThat(stranger.receive(0, 0, SILENCE)).isNull();
            assertThat(aggregationSwitch.counters()).containsEntry("contributions", 0L);
        }
    }

    @Test
    void countersHaveStableNames() {
        try (AggregationSwitch aggregationSwitch = startOnLoopback(2, true)) {
            assertThat(aggregationSwitch.counters()).containsOnlyKeys(
                    "packets_received", "datagrams_received", "ingress_simulated_drops", "contributions", "one_round_results",
                    "mismatched_rounds", "rounds_reopened", "results_sent",
                    "retransmissions_answered", "retransmissions_dropped", "packets_sent", "datagrams_sent",
                    "segmented_datagrams_sent", "udp_segmentation_off", "udp_gro_off", "egress_simulated_drops",
                    "egress_queue_full_drops", "ipc_results", "ipc_wake_ups", "ipc_wake_ups_received", "ipc_records_unblocked", "ipc_rings_broken", "ipc_board_faults", "partials_forwarded", "spine_results", "io_errors",
                    "drops_truncated", "drops_too_long", "drops_wrong_msg_type", "drops_unused_bits",
                    "drops_one_round_too_long", "drops_unknown_source", "drops_unknown_job", "drops_job_mismatch", "drops_size_mismatch",
                    "drops_slot_out_of_range", "drops_wrong_port", "drops_length_mismatch", "drops_stale_round", "drops_stale_spine_result",
                    "drops_not_a_ring_worker", "drops_bad_tag");
            assertThat(aggregationSwitch.counters().values()).containsOnly(0L);
        }
    }

    @Test
    void closeIsIdempotentAndFreesThePorts() throws Exception {
        AggregationSwitch aggregationSwitch = startOnLoopback(2, true);
        int[] ports = aggregationSwitch.ports();

        aggregationSwitch.close();
        aggregationSwitch.close();

        assertThat(aggregationSwitch.ports()).containsExactly(ports);
        for (int port : ports) {
            try (DatagramChannel channel = DatagramChannel.open()) {
                channel.bind(new InetSocketAddress(LoopbackWorkers.LOOPBACK, port));
            }
        }
    }

    @Test
    void portInUseIsAClearError() throws Exception {
        try (DatagramChannel occupant = DatagramChannel.open().bind(new InetSocketAddress(LoopbackWorkers.LOOPBACK, 0))) {
            int taken = ((InetSocketAddress) occupant.getLocalAddress()).getPort();

            assertThatThrownBy(() -> AggregationSwitch.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(taken)))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasMessageContaining("cannot bind switch UDP port " + taken + " on 127.0.0.1");
        }
    }

    @Test
    void unknownBindAddressIsRejected() {
        assertThatThrownBy(() -> AggregationSwitch.start(new SwitchConfig().bindAddress("no-such-host.invalid").basePort(0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no-such-host.invalid");
    }

    private static AggregationSwitch startOnLoopback(int portCount, boolean nativeTransport) {
        return AggregationSwitch.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0).portCount(portCount)
                .nativeTransport(nativeTransport));
    }

    /** Waits up to the arrival time for a counter of the switch to reach {@code expected}, then checks it. */
    static void awaitCounter(AggregationSwitch aggregationSwitch, String name, long expected) {
        long deadline = System.nanoTime() + ARRIVAL.toNanos();
        while (aggregationSwitch.counters().get(name) < expected && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(aggregationSwitch.counters()).containsEntry(name, expected);
    }
}
