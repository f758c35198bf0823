package io.switchml.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads a secret (a token, a job secret) from its file: the first line, trimmed. */
public final class SecretFiles {
    private SecretFiles() {
    }

    /**
     * @param what the setting that named the file, for the error message (which never shows the content)
     * @throws IllegalArgumentException when the file cannot be read or its first line is empty
     */
    public static String read(Path file, String what) {
        String secret;
        try {
            secret = Files.readAllLines(file, StandardCharsets.UTF_8).stream().findFirst().orElse("").trim();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + what + " " + file + ": " + e.getMessage(), e);
        }
        if (secret.isEmpty()) {
            throw new IllegalArgumentException(what + " " + file + " is empty; its first line is the secret");
        }
        return secret;
    }
}
