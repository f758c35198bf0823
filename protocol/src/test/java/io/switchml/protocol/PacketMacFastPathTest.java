package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/**
 * {@link PacketMac}'s unrolled one-pass hash, which reads two payload words at a time, against
 * {@link PacketMacReference}: every packet size, every element count modulo 4 (the two-pair steps, a pair left
 * over, an element left over) and the shortest and longest, every offset modulo 8, heap buffers (wrapped at an
 * array offset too) and direct ones, both byte orders. And a few tags written down before the fast path existed,
 * so that the reference itself cannot drift.
 */
class PacketMacFastPathTest {

    private static final byte[] SALT = HexFormat.of().parseHex("000102030405060708090a0b0c0d0e0f");

    private static PacketKey key(PayloadSize size) throws Exception {
        byte[] digest = MessageDigest.getInstance("SHA-256").digest("a job secret of the test".getBytes(StandardCharsets.UTF_8));
        return PacketKey.derive(digest, SALT, size);
    }

    /** {@code length} random bytes at {@code offset} of a buffer of the kind and order asked for. */
    private static ByteBuffer random(int offset, int length, int kind, ByteOrder order, SplittableRandom random) {
        int capacity = offset + length + PacketMac.TAG_BYTES;
        ByteBuffer b = switch (kind) {
            case 0 -> ByteBuffer.allocate(capacity);
            case 1 -> ByteBuffer.allocateDirect(capacity);
            default -> ByteBuffer.wrap(new byte[capacity + 13], 13, capacity).slice(); // arrayOffset 13
        };
        b.order(order);
        for (int i = 0; i < capacity; i++) {
            b.put(i, (byte) random.nextInt(256));
        }
        return b;
    }

    @Test
    void everyLengthClassOffsetBufferKindAndByteOrderTagsAsTheReference() throws Exception {
        SplittableRandom random = new SplittableRandom(53);
        PacketMac mac = new PacketMac();
        int checked = 0;
        for (PayloadSize size : PayloadSize.values()) {
            PacketKey key = key(size);
            int k = size.elements();
            int[] counts = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, k - 3, k - 2, k - 1, k,
                    random.nextInt(1, k + 1), random.nextInt(1, k + 1), random.nextInt(1, k + 1), random.nextInt(1, k + 1)};
            for (int elements : counts) {
                int length = AggregationPacket.bytesFor(elements);
                for (int offset = 0; offset < 8; offset++) {
                    for (int kind = 0; kind < 3; kind++) {
                        for (ByteOrder order : new ByteOrder[] {ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN}) {
                            ByteBuffer b = random(offset, length, kind, order, random);
                            int origin = random.nextBoolean() ? PacketMac.RESULT : random.nextInt();
                            assertThat(mac.tag(b, offset, length, key, origin))
                                    .as("%s, %d elements at %d, kind %d, %s", size, elements, offset, kind, order)
                                    .isEqualTo(PacketMacReference.tag(b, offset, length, key, origin))
                                    .isEqualTo(PacketMacReference.previousTag(mac, b, offset, length, key, origin));
                            checked++;
                        }
                    }
                }
            }
        }
        assertThat(checked).isEqualTo(PayloadSize.values().length * 20 * 8 * 3 * 2);
    }

    @Test
    void theTagsOfBeforeTheFastPath() throws Exception {
        // Tags of PacketMac as of 6ffb8e8 (a getInt per word): B256 and B61440, 1, 2, 3, 5 and all elements.
        int[] counts = {1, 2, 3, 5, -1};
        String[][] want = {
                {"6b4eea2fb2022707", "94e49dbbec6f4504", "09e14b097423d7d5", "7d12fe95a3e76da6", "827142aeea382f5e"},
                {"d4416059c2a49f46", "df69621ba2aeae9c", "edcfa3ae2533edd8", "7f58a3a6889f7326", "86265c485604f0e2"}};
        PayloadSize[] sizes = {PayloadSize.B256, PayloadSize.B61440};
        PacketMac mac = new PacketMac();
        for (int s = 0; s < sizes.length; s++) {
            PacketKey key = key(sizes[s]);
            for (int c = 0; c < counts.length; c++) {
                int elements = counts[c] < 0 ? sizes[s].elements() : counts[c];
                int length = AggregationPacket.bytesFor(elements);
                ByteBuffer b = random(0, length, 1, ByteOrder.BIG_ENDIAN, new SplittableRandom(elements));
                String tag = HexFormat.of().toHexDigits(mac.tag(b, 0, length, key, c - 1));
                assertThat(tag).as("%s, %d elements", sizes[s], elements).isEqualTo(want[s][c]);
            }
        }
    }
}
