package io.switchml.controller;

import io.switchml.control.JobNames;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where the digests of the secrets the operator issued outlive a restart ({@code --issued-secrets-file}):
 * one line per job name, {@code DIGEST<TAB>NAME} (the digest base64, the name printable, so without a
 * tab). Only digests: the file lets nobody join a job. Written whole to a fresh 0600 file beside it and
 * moved over it, so a crash leaves the old one or the new one, never half of either.
 */
final class IssuedSecretsFile {
    private final Path path;

    IssuedSecretsFile(Path path) {
        this.path = path;
    }

    /** The digests the file holds, by job name; empty when it does not exist yet. */
    Map<String, byte[]> load() {
        Map<String, byte[]> digests = new LinkedHashMap<>();
        if (!Files.exists(path)) {
            return digests;
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the issued secrets in " + path + ": " + e.getMessage(), e);
        }
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            int tab = line.indexOf('\t');
            byte[] digest;
            try {
                digest = tab > 0 ? Base64.getDecoder().decode(line.substring(0, tab)) : null;
            } catch (IllegalArgumentException e) {
                digest = null;
            }
            String name = tab > 0 ? line.substring(tab + 1) : "";
            if (digest == null || digest.length != 32 || JobNames.problem(name) != null) {
                throw new IllegalArgumentException("the issued secrets in " + path + ": line " + (i + 1)
                        + " is not DIGEST<TAB>JOB_NAME (a SHA-256 digest in base64 and a job name)");
            }
            digests.put(name, digest);
        }
        return digests;
    }

    /** Replaces the file's content with {@code digests}. */
    void save(Map<String, byte[]> digests) {
        StringBuilder text = new StringBuilder();
        digests.forEach((name, digest) -> text.append(Base64.getEncoder().encodeToString(digest)).append('\t')
                .append(name).append('\n'));
        try {
            Path dir = path.toAbsolutePath().getParent();
            Path fresh = Files.createTempFile(dir, path.getFileName().toString(), ".new",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try {
                Files.writeString(fresh, text, StandardCharsets.UTF_8);
                Files.move(fresh, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(fresh);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the issued secrets to " + path + ": " + e.getMessage(), e);
        }
    }
}
