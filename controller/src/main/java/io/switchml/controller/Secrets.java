package io.switchml.controller;

import io.switchml.protocol.SecretDigest;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Secrets (the operator token, job secrets) are kept only as SHA-256 digests and compared in
 * constant time, so that neither the controller's memory nor the time of a refusal tells anything
 * about them.
 */
final class Secrets {
    /** Long enough to be a secret, short enough for one metadata header. */
    static final int MIN_LENGTH = 16;
    static final int MAX_LENGTH = 512;
    private static final SecureRandom RANDOM = new SecureRandom();

    private Secrets() {
    }

    static byte[] digest(String secret) {
        return SecretDigest.of(secret);
    }

    /** Constant-time for digests of equal length (all are SHA-256); null matches only null. */
    static boolean same(byte[] a, byte[] b) {
        if (a == null || b == null) {
            return a == b;
        }
        return MessageDigest.isEqual(a, b);
    }

    /** 32 random bytes, URL-safe base64 (43 characters). */
    static String fresh() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The secret itself if usable; the message names {@code what}, never the value. */
    static String requireUsable(String secret, String what) {
        if (secret == null || secret.length() < MIN_LENGTH || secret.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("the " + what + " must have " + MIN_LENGTH + ".." + MAX_LENGTH
                    + " characters (`openssl rand -base64 32` makes one)");
        }
        for (int i = 0; i < secret.length(); i++) {
            char c = secret.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                throw new IllegalArgumentException("the " + what + " must be printable ASCII without spaces"
                        + " (it travels as a gRPC header)");
            }
        }
        return secret;
    }
}
