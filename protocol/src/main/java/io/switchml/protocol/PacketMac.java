package io.switchml.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import javax.crypto.Cipher;

/**
 * Tags and checks the packets of a job with authenticated packets (docs/ARCHITECTURE.md section 19): an
 * {@value #TAG_BYTES}-byte tag after the payload, over the header, the exponents, the payload, the payload's
 * length and who sent it (a worker's rank, or {@link #RESULT} for the switch's results).
 *
 * <p>The tag is a universal hash under a secret key, encrypted: NH, the hash of UMAC (RFC 4418), in two
 * iterations whose keys are shifted by {@value #SHIFT_WORDS} words (the "Toeplitz" construction; two messages of
 * the same length collide with probability at most 2^-64), and AES-128 of its 128 bits, of which the tag keeps the
 * first 64. Hash-then-encrypt needs no nonce, so a retransmission, or a result multicast to every rank, is simply
 * tagged again and gets the same tag; every message is padded to the job's packet size, with its length in the
 * tail, so that messages of different lengths are distinct inputs of one length. A forger who sees q tagged packets
 * succeeds with probability about q^2 x 2^-65 + 2^-64 per try; the key is per run of a job. NH is a multiply and an
 * add per two payload words, several GB/s in plain Java, where HMAC-SHA256 makes 0.8 GB/s on the same core.
 *
 * <p>Not thread-safe: one instance per thread (its AES cipher is reinitialised when the key changes).
 */
public final class PacketMac {
    /** Bytes of the tag that follows the payload of an authenticated packet. */
    public static final int TAG_BYTES = 8;
    /** The origin of a result: the switch's. */
    public static final int RESULT = -1;
    /** The words after the payload in the hashed message: two of header, exponents and length, and the origin. */
    static final int TAIL_WORDS = 4;
    /** How far the second iteration's key is shifted. */
    static final int SHIFT_WORDS = 4;

    private final Cipher prf;
    private PacketKey keyed;
    private final byte[] block = new byte[16];
    private final byte[] encrypted = new byte[16];

    public PacketMac() {
        try {
            this.prf = Cipher.getInstance("AES/ECB/NoPadding");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK has no AES: " + e, e);
        }
    }

    /**
     * Writes the tag of the packet at {@code offset} of {@code buffer}, {@code length} bytes without the tag,
     * right after it; returns the length with the tag.
     */
    public int sign(ByteBuffer buffer, int offset, int length, PacketKey key, int origin) {
        buffer.putLong(offset + length, tag(buffer, offset, length, key, origin));
        return length + TAG_BYTES;
    }

    /**
     * Whether the packet at {@code offset} of {@code buffer}, {@code lengthWithTag} bytes of which the last
     * {@value #TAG_BYTES} are its tag, carries the tag {@code key} gives it from {@code origin}. False for a
     * length no packet of the key's size has.
     */
    public boolean verify(ByteBuffer buffer, int offset, int lengthWithTag, PacketKey key, int origin) {
        int length = lengthWithTag - TAG_BYTES;
        if (AggregationPacket.elementsIn(length, key.size().elements()) < 0) {
            return false;
        }
        return buffer.getLong(offset + length) == tag(buffer, offset, length, key, origin);
    }

    /**
     * The tag of the {@code length}-byte packet at {@code offset} (header and whole elements).
     *
     * <p>Both iterations of NH run in one pass, two pairs of payload words a step: each 8-byte read gives a pair (one
     * bounds check where a {@code getInt} per word took two), each word is read once for both iterations, and the
     * step's two pairs add into sums of their own, so that consecutive multiplies do not wait on one chain of adds.
     * The sums are modulo 2^64, so the order of their adds changes no tag ({@code PacketMacFastPathTest} holds this
     * loop to a plain reference of the definition, and {@code PacketMacBenchmark} to the loop it replaced).
     */
    long tag(ByteBuffer buffer, int offset, int length, PacketKey key, int origin) {
        int elements = AggregationPacket.elementsIn(length, key.size().elements());
        if (elements < 0) {
            throw new IllegalArgumentException("a " + length + "-byte packet is not one of " + key.size());
        }
        int[] k = key.hashKey;
        int at = offset + ProtocolConstants.PAYLOAD_OFFSET;
        int pairs = elements / 2;
        // Two 32-bit words per 8-byte read: the first in the high half of a big-endian read, in the low half of a
        // little-endian one (rotated into the high half here, so that both orders split alike).
        int rotate = buffer.order() == ByteOrder.BIG_ENDIAN ? 0 : Integer.SIZE;
        long first = 0;
        long second = 0;
        long first1 = 0;
        long second1 = 0;
        int i = 0;
        for (int quads = pairs & ~1; i < 2 * quads; i += 4) {
            int p = at + i * Integer.BYTES;
            long w = Long.rotateLeft(buffer.getLong(p), rotate);
            long v = Long.rotateLeft(buffer.getLong(p + Long.BYTES), rotate);
            int m0 = (int) (w >>> 32);
            int m1 = (int) w;
            int m2 = (int) (v >>> 32);
            int m3 = (int) v;
            int k0 = k[i];
            int k1 = k[i + 1];
            int k2 = k[i + 2];
            int k3 = k[i + 3];
            int k4 = k[i + SHIFT_WORDS];
            int k5 = k[i + 1 + SHIFT_WORDS];
            int k6 = k[i + 2 + SHIFT_WORDS];
            int k7 = k[i + 3 + SHIFT_WORDS];
            first += PacketKey.unsigned(m0 + k0) * PacketKey.unsigned(m1 + k1);
            first1 += PacketKey.unsigned(m2 + k2) * PacketKey.unsigned(m3 + k3);
            second += PacketKey.unsigned(m0 + k4) * PacketKey.unsigned(m1 + k5);
            second1 += PacketKey.unsigned(m2 + k6) * PacketKey.unsigned(m3 + k7);
        }
        first += first1;
        second += second1;
        if (i < 2 * pairs) {
            long w = Long.rotateLeft(buffer.getLong(at + i * Integer.BYTES), rotate);
            int m0 = (int) (w >>> 32);
            int m1 = (int) w;
            first += PacketKey.unsigned(m0 + k[i]) * PacketKey.unsigned(m1 + k[i + 1]);
            second += PacketKey.unsigned(m0 + k[i + SHIFT_WORDS]) * PacketKey.unsigned(m1 + k[i + 1 + SHIFT_WORDS]);
        }
        int padFrom = pairs;
        if ((elements & 1) != 0) {
            // The last element pairs with a zero word.
            int last = elements - 1;
            int m0 = buffer.getInt(at + last * Integer.BYTES);
            first += PacketKey.unsigned(m0 + k[last]) * PacketKey.unsigned(k[last + 1]);
            second += PacketKey.unsigned(m0 + k[last + SHIFT_WORDS]) * PacketKey.unsigned(k[last + 1 + SHIFT_WORDS]);
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
        second += PacketKey.unsigned(t0 + k[t + SHIFT_WORDS]) * PacketKey.unsigned(t1 + k[t + 1 + SHIFT_WORDS])
                + PacketKey.unsigned(t2 + k[t + 2 + SHIFT_WORDS]) * PacketKey.unsigned(origin + k[t + 3 + SHIFT_WORDS]);
        return encrypt(first, second, key);
    }

    /** The tag of the hash's two sums: AES-128 of their 16 bytes, the first 8. */
    long encrypt(long first, long second, PacketKey key) {
        for (int i = 0; i < 8; i++) {
            block[i] = (byte) (first >>> (56 - 8 * i));
            block[8 + i] = (byte) (second >>> (56 - 8 * i));
        }
        try {
            if (keyed != key) {
                prf.init(Cipher.ENCRYPT_MODE, key.prfKey());
                keyed = key;
            }
            prf.doFinal(block, 0, 16, encrypted, 0);
        } catch (GeneralSecurityException e) {
            keyed = null;
            throw new IllegalStateException("AES refused a packet tag: " + e, e);
        }
        long tag = 0;
        for (int i = 0; i < 8; i++) {
            tag = tag << 8 | (encrypted[i] & 0xFF);
        }
        return tag;
    }
}
