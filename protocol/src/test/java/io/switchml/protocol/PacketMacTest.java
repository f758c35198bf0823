package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.SplittableRandom;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class PacketMacTest {

    private static final byte[] SALT = HexFormat.of().parseHex("000102030405060708090a0b0c0d0e0f");

    private static byte[] digest(String secret) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
    }

    private static PacketKey key(PayloadSize size) throws Exception {
        return PacketKey.derive(digest("a job secret of the test"), SALT, size);
    }

    /** A packet of {@code elements} random elements at {@code offset}, with room for its tag after it. */
    private static ByteBuffer packet(PayloadSize size, int elements, int offset, long seed, boolean direct) {
        int length = AggregationPacket.bytesFor(elements);
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(offset + length + PacketMac.TAG_BYTES)
                : ByteBuffer.allocate(offset + length + PacketMac.TAG_BYTES);
        SplittableRandom random = new SplittableRandom(seed);
        AggregationPacket p = new AggregationPacket().wrap(b, offset);
        p.header(size, random.nextInt(256), random.nextInt(), random.nextInt(ProtocolConstants.MAX_SLOTS),
                random.nextInt(2), random.nextInt(-128, 128), random.nextInt(-128, 128));
        for (int i = 0; i < elements; i++) {
            p.element(i, random.nextInt());
        }
        return b;
    }

    @Test
    void hkdfMatchesRfc5869TestCase1() throws Exception {
        byte[] ikm = HexFormat.of().parseHex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b");
        byte[] salt = HexFormat.of().parseHex("000102030405060708090a0b0c");
        byte[] info = HexFormat.of().parseHex("f0f1f2f3f4f5f6f7f8f9");
        assertThat(HexFormat.of().formatHex(PacketKey.hkdfSha256(ikm, salt, info, 42))).isEqualTo(
                "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
    }

    @Property(tries = 200)
    void aTaggedPacketVerifiesAndEveryChangedByteIsCaught(@ForAll PayloadSize size,
                                                          @ForAll @IntRange(min = 1, max = 15360) int wanted,
                                                          @ForAll @IntRange(min = 0, max = 7) int offset,
                                                          @ForAll long seed) throws Exception {
        int elements = Math.min(wanted, size.elements());
        PacketKey key = key(size);
        PacketMac mac = new PacketMac();
        ByteBuffer b = packet(size, elements, offset, seed, seed % 2 == 0);
        int length = AggregationPacket.bytesFor(elements);
        assertThat(mac.sign(b, offset, length, key, 3)).isEqualTo(length + PacketMac.TAG_BYTES);
        assertThat(mac.verify(b, offset, length + PacketMac.TAG_BYTES, key, 3)).isTrue();

        SplittableRandom random = new SplittableRandom(seed ^ 0x5DEECE66DL);
        for (int t = 0; t < 16; t++) {
            int at = offset + (t < 10 ? t : random.nextInt(length + PacketMac.TAG_BYTES)); // every header byte, then any
            int bit = 1 << random.nextInt(8);
            b.put(at, (byte) (b.get(at) ^ bit));
            assertThat(mac.verify(b, offset, length + PacketMac.TAG_BYTES, key, 3))
                    .as("byte %d of %d flipped by %d", at - offset, length + PacketMac.TAG_BYTES, bit).isFalse();
            b.put(at, (byte) (b.get(at) ^ bit));
        }
        assertThat(mac.verify(b, offset, length + PacketMac.TAG_BYTES, key, 3)).isTrue();
    }

    @Test
    void theTagBindsWhoSentItTheRunsSaltAndTheSecret() throws Exception {
        PayloadSize size = PayloadSize.B1024;
        PacketKey key = key(size);
        PacketMac mac = new PacketMac();
        ByteBuffer b = packet(size, size.elements(), 0, 7, true);
        int length = AggregationPacket.bytesFor(size.elements());
        mac.sign(b, 0, length, key, 0);
        assertThat(mac.verify(b, 0, length + PacketMac.TAG_BYTES, key, 0)).isTrue();
        assertThat(mac.verify(b, 0, length + PacketMac.TAG_BYTES, key, 1)).as("another rank").isFalse();
        assertThat(mac.verify(b, 0, length + PacketMac.TAG_BYTES, key, PacketMac.RESULT)).as("a result").isFalse();
        byte[] otherSalt = SALT.clone();
        otherSalt[15] ^= 1;
        assertThat(mac.verify(b, 0, length + PacketMac.TAG_BYTES,
                PacketKey.derive(digest("a job secret of the test"), otherSalt, size), 0)).as("another run").isFalse();
        assertThat(mac.verify(b, 0, length + PacketMac.TAG_BYTES,
                PacketKey.derive(digest("another job's secret"), SALT, size), 0)).as("another secret").isFalse();
        // Both ends derive the same key: a fresh derivation (the switch's) verifies the worker's tag.
        assertThat(new PacketMac().verify(b, 0, length + PacketMac.TAG_BYTES, key(size), 0)).isTrue();
    }

    @Test
    void aShortPacketIsNotTheLongOneWithZerosAndLengthsOfNoPacketNeverVerify() throws Exception {
        PayloadSize size = PayloadSize.B256;
        PacketKey key = key(size);
        PacketMac mac = new PacketMac();
        ByteBuffer shorter = packet(size, 5, 0, 11, false);
        ByteBuffer padded = ByteBuffer.allocate(AggregationPacket.bytesFor(6) + PacketMac.TAG_BYTES);
        for (int i = 0; i < AggregationPacket.bytesFor(5); i++) {
            padded.put(i, shorter.get(i));
        }
        long five = mac.tag(shorter, 0, AggregationPacket.bytesFor(5), key, 0);
        long six = mac.tag(padded, 0, AggregationPacket.bytesFor(6), key, 0);
        assertThat(five).isNotEqualTo(six);

        // The tag of 5 elements under the length of 4 (one element cut off, the tag moved up): refused.
        mac.sign(shorter, 0, AggregationPacket.bytesFor(5), key, 0);
        ByteBuffer cut = ByteBuffer.allocate(AggregationPacket.bytesFor(4) + PacketMac.TAG_BYTES);
        for (int i = 0; i < AggregationPacket.bytesFor(4); i++) {
            cut.put(i, shorter.get(i));
        }
        cut.putLong(AggregationPacket.bytesFor(4), shorter.getLong(AggregationPacket.bytesFor(5)));
        assertThat(mac.verify(cut, 0, cut.capacity(), key, 0)).isFalse();
        // Lengths no packet of the size has: no tag at all, a half element, more than k elements.
        assertThat(mac.verify(shorter, 0, PacketMac.TAG_BYTES + 3, key, 0)).isFalse();
        assertThat(mac.verify(shorter, 0, AggregationPacket.bytesFor(5) + 2 + PacketMac.TAG_BYTES - 4, key, 0)).isFalse();
        ByteBuffer tooLong = packet(PayloadSize.B512, size.elements() + 1, 0, 3, false);
        assertThat(mac.verify(tooLong, 0, tooLong.capacity(), key, 0)).isFalse();
        assertThatThrownBy(() -> mac.sign(tooLong, 0, tooLong.capacity() - PacketMac.TAG_BYTES, key, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not one of B256");
    }

    @Test
    void keysNeedTheDigestAndTheSalt() throws Exception {
        assertThatThrownBy(() -> PacketKey.derive(new byte[16], SALT, PayloadSize.B1024))
                .hasMessageContaining("32-byte SHA-256 digest");
        assertThatThrownBy(() -> PacketKey.derive(digest("x"), new byte[0], PayloadSize.B1024))
                .hasMessageContaining("16-byte salt, got 0 bytes");
        assertThat(key(PayloadSize.B1024).toString()).isEqualTo("PacketKey{B1024}");
    }
}
