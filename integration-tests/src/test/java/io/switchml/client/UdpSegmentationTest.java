package io.switchml.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.switchml.control.WorkerCounter;
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
            assertThat(counters.get("packets_received")).as("each packet arrived as its own datagram")
                    .isEqualTo(packetsSent);
        }
    }

    @Test
    void offSendsOneDatagramPerPacket() {
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.transport(UDP).udpSegmentation(false))) {
            AllReduceExactnessTest.checkFloatSum(cluster, 7, 64 * 2048 + 13, TestDefaults.ELEMENTS_PER_PACKET);
            for (SwitchMLContext context : cluster.contexts) {
                assertThat(context.statistics().count(WorkerCounter.SEGMENTED_DATAGRAMS)).isZero();
            }
        }
    }
}
