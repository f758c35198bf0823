package io.switchml.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.socket.DatagramPacket;
import io.switchml.control.WorkerCounter;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.JobSpec;
import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PacketKey;
import io.switchml.protocol.PacketMac;
import io.switchml.protocol.PayloadSize;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Jobs with authenticated packets (docs/ARCHITECTURE.md section 19, docs/security.md round 5) through a real
 * switch: exact (each packet's tag: {@code LaneEngineTest}, {@code SwitchProgramAuthenticationTest}), and a host that sends from a worker's address (here: through the
 * worker's own socket) or feeds a worker results cannot change a sum; every forgery is dropped and counted.
 */
class AuthenticatedPacketsTest {
    private static final String SECRET = "the-secret-of-the-authenticated-job-0123";
    private static final int ELEMENTS = 256;
    private static final int FORGERIES = 200;

    private static LocalCluster cluster(boolean authenticate) {
        return new LocalCluster(2, 1, b -> b.jobSecret(SECRET).authenticatePackets(authenticate)
                .elementsPerPacket(ELEMENTS).slotsPerThread(8).operationTimeout(Duration.ofSeconds(30)));
    }

    @Test
    void anAuthenticatedJobIsExactAndItsPacketsCarryTags() {
        try (LocalCluster cluster = cluster(true)) {
            AggregationSwitch dataplane = cluster.service.dataplane();
            assertThat(SwitchUnderAttackTest.liveJob(dataplane).authenticated()).isTrue();
            AllReduceExactnessTest.checkFloatSum(cluster, 5, 10 * ELEMENTS + 3, ELEMENTS);
            AllReduceExactnessTest.checkIntSum(cluster, 6, 7 * ELEMENTS - 1);
            for (int r = 0; r < 2; r++) {
                assertThat(cluster.contexts.get(r).statistics().count(WorkerCounter.FORGED_RESULTS)).isZero();
            }
            assertThat(dataplane.counters().get("drops_bad_tag")).isZero();
            assertThat(dataplane.counters().get("contributions")).isPositive();
        }
        // A job without tags, on the same code: its switch job has no key.
        try (LocalCluster cluster = cluster(false)) {
            AllReduceExactnessTest.checkFloatSum(cluster, 5, 10 * ELEMENTS + 3, ELEMENTS);
            assertThat(SwitchUnderAttackTest.liveJob(cluster.service.dataplane()).authenticated()).isFalse();
        }
    }

    @Test
    void forgedContributionsFromAWorkersAddressAndForgedResultsAreDroppedCountedAndChangeNoSum() throws Exception {
        try (LocalCluster cluster = cluster(true)) {
            AggregationSwitch dataplane = cluster.service.dataplane();
            AllReduceExactnessTest.checkFloatSum(cluster, 7, 4 * ELEMENTS, ELEMENTS);
            JobSpec job = SwitchUnderAttackTest.liveJob(dataplane);
            // The forger knows everything but the job secret: a key of its own guess.
            PacketKey guessed = PacketKey.derive(MessageDigest.getInstance("SHA-256")
                    .digest("a-guess-at-the-secret-0123456789".getBytes(StandardCharsets.UTF_8)), new byte[16], job.size());
            PacketMac mac = new PacketMac();
            SplittableRandom random = new SplittableRandom(53);

            // Contributions right in every field, from rank 0's own address and port: rounds far ahead, which the
            // switch would open with these values if it took them.
            SwitchSession rank0 = cluster.contexts.get(0).session();
            Channel channel = rank0.channel(0);
            for (int i = 0; i < FORGERIES; i++) {
                int slot = random.nextInt(job.slotsPerThread());
                int round = 1000 + 2 * i + random.nextInt(2);
                channel.writeAndFlush(new DatagramPacket(Unpooled.wrappedBuffer(forged(mac, guessed, job, slot, round, 0)),
                        rank0.switchEndpoint(0))).sync();
            }
            // Results right in every field but the tag, as if from the switch's address, into rank 1's socket.
            SwitchSession rank1 = cluster.contexts.get(1).session();
            Channel channel1 = rank1.channel(0);
            for (int i = 0; i < FORGERIES; i++) {
                ByteBuffer result = forged(mac, guessed, job, random.nextInt(job.slotsPerThread()), i, PacketMac.RESULT);
                channel1.eventLoop().submit(() -> channel1.pipeline().fireChannelRead(new DatagramPacket(
                        Unpooled.wrappedBuffer(result), (InetSocketAddress) channel1.localAddress(),
                        rank1.switchEndpoint(0)))).sync();
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (dataplane.counters().get("drops_bad_tag") < FORGERIES && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(dataplane.counters().get("drops_bad_tag")).isEqualTo(FORGERIES);
            assertThat(cluster.contexts.get(1).statistics().count(WorkerCounter.FORGED_RESULTS)).isEqualTo(FORGERIES);

            AllReduceExactnessTest.checkFloatSum(cluster, 8, 12 * ELEMENTS + 1, ELEMENTS);
            AllReduceExactnessTest.checkIntSum(cluster, 9, 9 * ELEMENTS);
            assertThat(dataplane.counters().get("drops_stale_round")).isZero();
        }
    }

    @Test
    void authenticationNeedsAJobSecretAndUdp() {
        SwitchMLConfig noSecret = SwitchMLConfig.builder().controller("127.0.0.1:9").rank(0).workers(2)
                .authenticatePackets(true).build();
        assertThatThrownBy(() -> SwitchMLContext.connect(noSecret))
                .isInstanceOf(io.switchml.api.SwitchMLException.class)
                .hasMessageContaining("authenticatePackets=on needs a job secret");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(2).jobSecret(SECRET).authenticatePackets(true)
                .transport(SwitchMLConfig.Transport.IPC).build())
                .hasMessageContaining("the switch's shared-memory port carries no tags");
    }

    /** A full packet of random values for (slot, round) of {@code job}, tagged under {@code key} as {@code origin}'s. */
    private static ByteBuffer forged(PacketMac mac, PacketKey key, JobSpec job, int slot, int round, int origin) {
        PayloadSize size = job.size();
        ByteBuffer packet = ByteBuffer.allocate(size.packetBytes() + PacketMac.TAG_BYTES);
        AggregationPacket p = new AggregationPacket().wrap(packet, 0)
                .header(size, job.jobNumber(), round, slot, round & 1, 0, 0);
        for (int i = 0; i < size.elements(); i++) {
            p.element(i, 1 << 20);
        }
        mac.sign(packet, 0, size.packetBytes(), key, origin);
        return packet;
    }
}
