package io.switchml.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The key of one job's authenticated packets (docs/ARCHITECTURE.md section 19): what {@link PacketMac} needs to
 * tag and check the job's contributions and results. Immutable, shared by every thread of a worker or the switch.
 *
 * <p>Derived on both sides from what the job's ranks and the switch already share, so that no key crosses the
 * network: the SHA-256 digest of the job's secret (the switch keeps only that digest) and a random salt that the
 * switch draws for each run of the job and returns with the join (it is public; it only makes every run's key its
 * own). HKDF-SHA256 (RFC 5869) turns them into two AES-128 keys: one for the tag's final pseudo-random function,
 * one that expands, as AES-CTR key stream, into the universal hash's key (one 32-bit word per payload element of
 * the job's packet size, and {@value #EXTRA_WORDS} more).
 */
public final class PacketKey {
    /** Bytes of the salt the switch draws per run of a job. */
    public static final int SALT_BYTES = 16;
    /** Key words beyond the payload's: the header's tail words, and the shift of the hash's second iteration. */
    static final int EXTRA_WORDS = PacketMac.TAIL_WORDS + PacketMac.SHIFT_WORDS;
    private static final byte[] LABEL = "switchml packet mac v1".getBytes(StandardCharsets.US_ASCII);

    private final PayloadSize size;
    private final SecretKeySpec prfKey;
    /** The universal hash's key: k + {@link #EXTRA_WORDS} words. */
    final int[] hashKey;
    /**
     * padFirst[j] and padSecond[j]: what the zero words of pairs j..k/2-1 add to each of the hash's two iterations,
     * so that a short packet costs its own length and still hashes as one of k elements.
     */
    final long[] padFirst;
    final long[] padSecond;

    private PacketKey(PayloadSize size, byte[] prfKey, int[] hashKey) {
        this.size = size;
        this.prfKey = new SecretKeySpec(prfKey, "AES");
        this.hashKey = hashKey;
        int pairs = size.elements() / 2;
        this.padFirst = new long[pairs + 1];
        this.padSecond = new long[pairs + 1];
        for (int j = pairs - 1; j >= 0; j--) {
            padFirst[j] = padFirst[j + 1] + unsigned(hashKey[2 * j]) * unsigned(hashKey[2 * j + 1]);
            padSecond[j] = padSecond[j + 1]
                    + unsigned(hashKey[2 * j + PacketMac.SHIFT_WORDS]) * unsigned(hashKey[2 * j + 1 + PacketMac.SHIFT_WORDS]);
        }
    }

    /**
     * The key of a job's packets of {@code size}.
     *
     * @param secretDigest the SHA-256 digest of the job's secret (32 bytes)
     * @param salt         the run's salt from the switch, {@value #SALT_BYTES} bytes
     */
    public static PacketKey derive(byte[] secretDigest, byte[] salt, PayloadSize size) {
        if (secretDigest == null || secretDigest.length != 32) {
            throw new IllegalArgumentException("a packet key needs the 32-byte SHA-256 digest of the job's secret");
        }
        if (salt == null || salt.length != SALT_BYTES) {
            throw new IllegalArgumentException("a packet key needs the switch's " + SALT_BYTES + "-byte salt, got "
                    + (salt == null ? "none" : salt.length + " bytes"));
        }
        try {
            byte[] info = Arrays.copyOf(LABEL, LABEL.length + 1);
            info[LABEL.length] = (byte) size.code();
            byte[] okm = hkdfSha256(secretDigest, salt, info, 32);
            byte[] prf = Arrays.copyOfRange(okm, 0, 16);
            byte[] stream = Arrays.copyOfRange(okm, 16, 32);
            int words = size.elements() + EXTRA_WORDS;
            Cipher ctr = Cipher.getInstance("AES/CTR/NoPadding");
            ctr.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(stream, "AES"), new IvParameterSpec(new byte[16]));
            ByteBuffer keyStream = ByteBuffer.wrap(ctr.doFinal(new byte[words * Integer.BYTES]));
            int[] hashKey = new int[words];
            for (int i = 0; i < words; i++) {
                hashKey[i] = keyStream.getInt();
            }
            return new PacketKey(size, prf, hashKey);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK cannot derive packet keys (HmacSHA256, AES/CTR): " + e, e);
        }
    }

    /** HKDF (RFC 5869) with HMAC-SHA256: extract, then expand to {@code length} bytes (at most 255 x 32). */
    static byte[] hkdfSha256(byte[] inputKey, byte[] salt, byte[] info, int length) throws GeneralSecurityException {
        Mac hmac = Mac.getInstance("HmacSHA256");
        hmac.init(new SecretKeySpec(salt, "HmacSHA256"));
        byte[] pseudoRandomKey = hmac.doFinal(inputKey);
        hmac.init(new SecretKeySpec(pseudoRandomKey, "HmacSHA256"));
        byte[] out = new byte[length];
        byte[] previous = new byte[0];
        for (int filled = 0, counter = 1; filled < length; counter++) {
            hmac.update(previous);
            hmac.update(info);
            hmac.update((byte) counter);
            previous = hmac.doFinal();
            int n = Math.min(previous.length, length - filled);
            System.arraycopy(previous, 0, out, filled, n);
            filled += n;
        }
        return out;
    }

    /** The packet size the key covers: packets of other sizes never verify. */
    public PayloadSize size() {
        return size;
    }

    SecretKeySpec prfKey() {
        return prfKey;
    }

    static long unsigned(int word) {
        return word & 0xFFFF_FFFFL;
    }

    @Override
    public String toString() {
        return "PacketKey{" + size + "}"; // never the key
    }
}
