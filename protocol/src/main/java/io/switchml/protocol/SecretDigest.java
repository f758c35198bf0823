package io.switchml.protocol;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The SHA-256 digest of a secret's UTF-8 bytes: what the controller keeps of a job's secret (and the operator
 * token), and what both ends feed to {@link PacketKey#derive}. One function, so that the switch and the workers
 * derive a job's packet key from the same bytes (docs/ARCHITECTURE.md section 19).
 */
public final class SecretDigest {
    /** Bytes of a digest. */
    public static final int BYTES = 32;

    private SecretDigest() {
    }

    public static byte[] of(String secret) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError("every JDK has SHA-256", e);
        }
    }
}
