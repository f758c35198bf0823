package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PacketKey;
import io.switchml.protocol.PacketMac;
import io.switchml.protocol.PayloadSize;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A job with authenticated packets (docs/ARCHITECTURE.md section 19): the switch program adds only contributions
 * whose tag its key gives them from their sender, drops and counts the rest, and tags its results.
 */
class SwitchProgramAuthenticationTest {
    private static final PayloadSize SIZE = PayloadSize.B128;
    private final SwitchHarness harness = new SwitchHarness();
    private final PacketMac mac = new PacketMac();

    private static PacketKey key(String secret, int saltByte) throws Exception {
        byte[] salt = new byte[PacketKey.SALT_BYTES];
        salt[0] = (byte) saltByte;
        return PacketKey.derive(MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8)),
                salt, SIZE);
    }

    private JobSpec install(PacketKey key) {
        JobSpec plain = TestJobs.job(1, 2, SIZE, 4, 1, true);
        return harness.install(new JobSpec(plain.jobNumber(), plain.name(), SIZE, plain.slotsPerThread(), plain.threads(),
                plain.endpoints(), true, 0, key));
    }

    /** The short packet of {@code values} for (slot 0, round), tagged with {@code key} as rank {@code origin}'s. */
    private ByteBuffer tagged(PacketKey key, int origin, int round, int... values) {
        ByteBuffer plain = TestPackets.shortPacket(SIZE, 1, round, 0, round & 1, 0, 0, values);
        ByteBuffer packet = ByteBuffer.allocate(plain.capacity() + PacketMac.TAG_BYTES);
        packet.put(plain).clear();
        mac.sign(packet, 0, plain.capacity(), key, origin);
        return packet;
    }

    private NextStep send(JobSpec spec, int rank, ByteBuffer packet) {
        return harness.fromWorker(spec, rank, 0, packet);
    }

    @Test
    void taggedContributionsAreSummedAndTheResultCarriesTheSwitchsTag() throws Exception {
        PacketKey key = key("the job's secret, 32 characters", 1);
        JobSpec spec = install(key);
        assertThat(send(spec, 0, tagged(key, 0, 0, 1, 2, 3))).isEqualTo(NextStep.CONSUME);
        assertThat(send(spec, 1, tagged(key, 1, 0, 10, 20, 30))).isEqualTo(NextStep.MULTICAST);
        List<RecordingSink.Sent> sent = harness.sink.drain();
        assertThat(sent).hasSize(2);
        for (RecordingSink.Sent result : sent) {
            ByteBuffer bytes = ByteBuffer.wrap(result.bytes());
            assertThat(bytes.capacity()).isEqualTo(AggregationPacket.bytesFor(3) + PacketMac.TAG_BYTES);
            assertThat(mac.verify(bytes, 0, bytes.capacity(), key, PacketMac.RESULT)).isTrue();
            assertThat(mac.verify(bytes, 0, bytes.capacity(), key, 0)).as("a result is not a rank's packet").isFalse();
            AggregationPacket packet = TestPackets.wrap(result.bytes());
            assertThat(new int[] {packet.element(0), packet.element(1), packet.element(2)}).containsExactly(11, 22, 33);
        }
        assertThat(harness.count(DropReason.BAD_TAG)).isZero();
    }

    @Test
    void forgedAlteredAndMisattributedContributionsAreDroppedCountedAndNeverAdded() throws Exception {
        PacketKey key = key("the job's secret, 32 characters", 1);
        JobSpec spec = install(key);
        // A spoofer of rank 0's address who does not hold the key: its own key, a stale run's, or any tag at all.
        assertThat(send(spec, 0, tagged(key("a guessed secret, 32 characters", 1), 0, 0, 1000))).isEqualTo(NextStep.DROP);
        assertThat(send(spec, 0, tagged(key("the job's secret, 32 characters", 2), 0, 0, 1000))).isEqualTo(NextStep.DROP);
        ByteBuffer altered = tagged(key, 0, 0, 1);
        altered.putInt(AggregationPacket.bytesFor(0), 1000); // the value changed on the way, the tag kept
        assertThat(send(spec, 0, altered)).isEqualTo(NextStep.DROP);
        // Rank 1's valid packet sent from rank 0's address: the tag names its sender.
        assertThat(send(spec, 0, tagged(key, 1, 0, 1000))).isEqualTo(NextStep.DROP);
        // A packet without a tag: its last 8 bytes are taken for one, and are not it.
        ByteBuffer untagged = TestPackets.packet(SIZE, 1, 0, 0, 0, 0, 0, 1000);
        assertThat(send(spec, 0, untagged)).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.BAD_TAG)).isEqualTo(5);

        assertThat(send(spec, 0, tagged(key, 0, 0, 1))).isEqualTo(NextStep.CONSUME);
        assertThat(send(spec, 1, tagged(key, 1, 0, 2))).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.sink.drain()).allSatisfy(result -> assertThat(result.elements()[0]).isEqualTo(3));
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isEqualTo(2);
    }

    @Test
    void aValidPacketReplayedInALaterRoundIsStale() throws Exception {
        PacketKey key = key("the job's secret, 32 characters", 1);
        JobSpec spec = install(key);
        ByteBuffer roundZero = tagged(key, 0, 0, 1);
        send(spec, 0, roundZero.duplicate());
        send(spec, 1, tagged(key, 1, 0, 2));
        send(spec, 0, tagged(key, 0, 1, 5)); // rank 0 moves on to round 1, on copy 1: its bit in copy 0 is cleared
        harness.sink.drain();
        // A captured round-0 packet with its valid tag would open a new round on copy 0 with old values.
        assertThat(send(spec, 0, roundZero.duplicate())).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.STALE_ROUND)).isEqualTo(1);
        assertThat(send(spec, 1, tagged(key, 1, 1, 6))).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.sink.drain()).allSatisfy(result -> assertThat(result.elements()[0]).isEqualTo(11));
        send(spec, 0, tagged(key, 0, 2, 7));
        assertThat(send(spec, 1, tagged(key, 1, 2, 8))).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.sink.drain()).as("round 2 holds only round 2's values")
                .allSatisfy(result -> assertThat(result.elements()[0]).isEqualTo(15));
    }

    @Test
    void aJobWithoutTagsTakesNoneAndKeysNeedRoundNumbersItsSizeAndNoSpine() throws Exception {
        JobSpec plain = harness.install(TestJobs.job(2, 2, SIZE, 4, 1, true));
        ByteBuffer withTag = ByteBuffer.allocate(AggregationPacket.bytesFor(2) + PacketMac.TAG_BYTES);
        withTag.put(TestPackets.shortPacket(SIZE, 2, 0, 0, 0, 0, 0, 1, 2)).clear();
        assertThat(harness.fromWorker(plain, 0, 0, withTag)).as("8 more bytes are 2 more elements").isEqualTo(NextStep.CONSUME);

        PacketKey key = key("the job's secret, 32 characters", 1);
        JobSpec switchMl = TestJobs.job(3, 2, SIZE, 4, 1, false);
        assertThatThrownBy(() -> new JobSpec(3, "j", SIZE, 4, 1, switchMl.endpoints(), false, 0, key))
                .hasMessageContaining("authenticated packets need workers that send round numbers");
        assertThatThrownBy(() -> new JobSpec(3, "j", PayloadSize.B256, 4, 1, switchMl.endpoints(), true, 0, key))
                .hasMessageContaining("its packet key is for B128 packets, the job's are B256");
        JobSpec authenticated = new JobSpec(3, "j", SIZE, 4, 1, switchMl.endpoints(), true, 0, key);
        assertThatThrownBy(() -> harness.controlPlane.installJob(authenticated,
                new UplinkSpec(java.net.InetAddress.getLoopbackAddress(), new int[] {48864}, 7)))
                .hasMessageContaining("authenticated packets are not carried between a leaf and its spine");
    }
}
