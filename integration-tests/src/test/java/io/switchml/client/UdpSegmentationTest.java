package io.switchml.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.switchml.control.WorkerCounter;
import io.switchml.udp.Offload;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Over UDP, a burst's consecutive full-size packets go as one segmented datagram (UDP GSO) that the
 * kernel cuts into those packets: the switch receives every packet as its own datagram, as without
 * it, and results stay the reference model's bit for bit.
 */
class UdpSegmentationTest {
    private static final SwitchMLConfig.Transport UDP = SwitchMLConfig.Transport.UDP;

    @Test
    void runsOfPacketsGoAsOneDatagramAndTheSwitchReceivesEachPacket() {
        assumeTrue(NettyTransport.segmentation(), "this host's channels cannot send segmented datagrams");
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.transport(UDP))) {
            long seed = 41;
            for (int size : new int[]{1, 2047, 2049, 64 * 2048 + 13, 300_001}) {
                AllReduceExactnessTest.checkFloatSum(cluster, seed, size, TestDefaults.ELEMENTS_PER_PACKET);
                AllReduceExactnessTest.checkIntSum(cluster, seed++, size);
            }
            long packetsSent = 0;
            for (SwitchMLContext context : cluster.contexts) {
                assertThat(context.statistics().count(WorkerCounter.SEGMENTED_DATAGRAMS)).as("segmented datagrams")
                        .isPositive();
                packetsSent += context.statistics().count(WorkerCounter.PACKETS_SENT);
            }
            Map<String, Long> counters = cluster.service.dataplane().counters();
            assertThat(counters.get("packets_received")).as("every packet reached the switch program")
                    .isEqualTo(packetsSent);
            assertThat(counters.get("segmented_datagrams_sent")).as("runs of results, one datagram per worker")
                    .isPositive();
            assertThat(counters.get("datagrams_sent")).as("a run of results counts once")
                    .isLessThan(counters.get("packets_sent"));
            assertThat(counters.get("udp_segmentation_off")).isZero();
        }
    }

    /**
     * With UDP GRO on both sides (where the kernel grants it), a run that one side sends as a segmented datagram
     * reaches the other as one datagram, which is split into its packets: every packet still counts and is checked on
     * its own, and the results stay exact.
     */
    @Test
    void runsArriveAsOneDatagramWhereTheKernelGrantsGro() {
        assumeTrue(NettyTransport.segmentation(), "this host's channels cannot send segmented datagrams");
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.transport(UDP).udpGro(Offload.AUTO))) {
            assumeTrue(cluster.service.dataplane().counters().get("udp_gro_off") == 0, "the kernel refused UDP GRO");
            for (int size : new int[]{5, 64 * 2048 + 13, 300_001}) {
                AllReduceExactnessTest.checkFloatSum(cluster, size, size, TestDefaults.ELEMENTS_PER_PACKET);
            }
            Map<String, Long> counters = cluster.service.dataplane().counters();
            long packetsSent = 0;
            for (SwitchMLContext context : cluster.contexts) {
                WorkerStatistics statistics = context.statistics();
                assertThat(statistics.count(WorkerCounter.UDP_GRO_OFF)).isZero();
                assertThat(statistics.count(WorkerCounter.DATAGRAMS_RECEIVED)).as("runs of results arrived whole")
                        .isLessThan(statistics.count(WorkerCounter.PACKETS_RECEIVED));
                packetsSent += statistics.count(WorkerCounter.PACKETS_SENT);
            }
            assertThat(counters.get("packets_received")).isEqualTo(packetsSent);
            assertThat(counters.get("datagrams_received")).as("the workers' runs arrived whole")
                    .isLessThan(counters.get("packets_received"));
        }
    }

    @Test
    void offSendsOneDatagramPerPacket() {
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.transport(UDP).udpSegmentation(Offload.OFF))) {
            AllReduceExactnessTest.checkFloatSum(cluster, 7, 64 * 2048 + 13, TestDefaults.ELEMENTS_PER_PACKET);
            for (SwitchMLContext context : cluster.contexts) {
                assertThat(context.statistics().count(WorkerCounter.SEGMENTED_DATAGRAMS)).isZero();
            }
        }
    }
}
