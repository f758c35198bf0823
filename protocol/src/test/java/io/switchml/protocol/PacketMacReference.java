package io.switchml.protocol;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import javax.crypto.Cipher;

/**
 * The tag of {@link PacketMac} as docs/ARCHITECTURE.md section 19 defines it, written as plainly as it reads: the
 * message built word by word (the payload, zeros up to the key's k elements, the four tail words), NH over it once
 * per iteration, AES-128 of the two sums. No precomputed padding, no unrolling, no 8-byte reads: what the fast path
 * of {@link PacketMac} must agree with bit for bit.
 *
 * <p>Also {@link #previousTag}, the loop the fast path replaced, for the benchmark's ratio.
 */
final class PacketMacReference {
    private PacketMacReference() {
    }

    /** The tag of the {@code length}-byte packet at {@code offset}, its words read in the buffer's byte order. */
    static long tag(ByteBuffer buffer, int offset, int length, PacketKey key, int origin) throws GeneralSecurityException {
        int k = key.size().elements();
        int elements = (length - ProtocolConstants.PAYLOAD_OFFSET) / Integer.BYTES;
        int[] message = new int[k + PacketMac.TAIL_WORDS];
        for (int i = 0; i < elements; i++) {
            message[i] = buffer.getInt(offset + ProtocolConstants.PAYLOAD_OFFSET + i * Integer.BYTES);
        }
        message[k] = buffer.getInt(offset);
        message[k + 1] = buffer.getInt(offset + Integer.BYTES);
        message[k + 2] = (buffer.getShort(offset + 2 * Integer.BYTES) & 0xFFFF) << 16 | elements;
        message[k + 3] = origin;
        long first = nh(message, key.hashKey, 0);
        long second = nh(message, key.hashKey, PacketMac.SHIFT_WORDS);

        byte[] block = ByteBuffer.allocate(16).putLong(first).putLong(second).array();
        Cipher aes = Cipher.getInstance("AES/ECB/NoPadding");
        aes.init(Cipher.ENCRYPT_MODE, key.prfKey());
        return ByteBuffer.wrap(aes.doFinal(block)).getLong();
    }

    /**
     * The tag as {@link PacketMac} computed it before its hash read two words at a time (tree 6ffb8e8): a
     * {@code getInt} per payload word, one pair a step, one sum per iteration. The baseline of
     * {@link PacketMacBenchmark}.
     */
    static long previousTag(PacketMac mac, ByteBuffer buffer, int offset, int length, PacketKey key, int origin) {
        int elements = AggregationPacket.elementsIn(length, key.size().elements());
        int[] k = key.hashKey;
        long first = 0;
        long second = 0;
        int at = offset + ProtocolConstants.PAYLOAD_OFFSET;
        int pairs = elements / 2;
        for (int j = 0; j < pairs; j++) {
            int i = 2 * j;
            int m0 = buffer.getInt(at + i * Integer.BYTES);
            int m1 = buffer.getInt(at + (i + 1) * Integer.BYTES);
            first += PacketKey.unsigned(m0 + k[i]) * PacketKey.unsigned(m1 + k[i + 1]);
            second += PacketKey.unsigned(m0 + k[i + PacketMac.SHIFT_WORDS]) * PacketKey.unsigned(m1 + k[i + 1 + PacketMac.SHIFT_WORDS]);
        }
        int padFrom = pairs;
        if ((elements & 1) != 0) {
            int i = elements - 1;
            int m0 = buffer.getInt(at + i * Integer.BYTES);
            first += PacketKey.unsigned(m0 + k[i]) * PacketKey.unsigned(k[i + 1]);
            second += PacketKey.unsigned(m0 + k[i + PacketMac.SHIFT_WORDS]) * PacketKey.unsigned(k[i + 1 + PacketMac.SHIFT_WORDS]);
            padFrom++;
        }
        first += key.padFirst[padFrom];
        second += key.padSecond[padFrom];
        int t = key.size().elements();
        int t0 = buffer.getInt(offset);
        int t1 = buffer.getInt(offset + Integer.BYTES);
        int t2 = (buffer.getShort(offset + 2 * Integer.BYTES) & 0xFFFF) << 16 | elements;
        first += PacketKey.unsigned(t0 + k[t]) * PacketKey.unsigned(t1 + k[t + 1])
                + PacketKey.unsigned(t2 + k[t + 2]) * PacketKey.unsigned(origin + k[t + 3]);
        second += PacketKey.unsigned(t0 + k[t + PacketMac.SHIFT_WORDS]) * PacketKey.unsigned(t1 + k[t + 1 + PacketMac.SHIFT_WORDS])
                + PacketKey.unsigned(t2 + k[t + 2 + PacketMac.SHIFT_WORDS]) * PacketKey.unsigned(origin + k[t + 3 + PacketMac.SHIFT_WORDS]);
        return mac.encrypt(first, second, key);
    }

    /** NH (RFC 4418 section 5.2.2, on 32-bit words): the sum, modulo 2^64, of (m0 + k0) x (m1 + k1) per pair. */
    static long nh(int[] message, int[] key, int shift) {
        long sum = 0;
        for (int i = 0; i < message.length; i += 2) {
            sum += PacketKey.unsigned(message[i] + key[i + shift]) * PacketKey.unsigned(message[i + 1] + key[i + 1 + shift]);
        }
        return sum;
    }
}
