package io.switchml.protocol;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import javax.crypto.Cipher;

/**
 * The tag of {@link PacketMac} as docs/ARCHITECTURE.md section 19 defines it, written as plainly as it reads: the
 * message built word by word (the payload, zeros up to the key's k elements, the four tail words), NH over it once
 * per iteration, AES-128 of the two sums. No precomputed padding, no unrolling, no 8-byte reads: what the fast path
 * of {@link PacketMac} must agree with bit for bit.
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

    /** NH (RFC 4418 section 5.2.2, on 32-bit words): the sum, modulo 2^64, of (m0 + k0) x (m1 + k1) per pair. */
    static long nh(int[] message, int[] key, int shift) {
        long sum = 0;
        for (int i = 0; i < message.length; i += 2) {
            sum += PacketKey.unsigned(message[i] + key[i + shift]) * PacketKey.unsigned(message[i + 1] + key[i + 1 + shift]);
        }
        return sum;
    }
}
