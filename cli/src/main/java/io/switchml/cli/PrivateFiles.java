package io.switchml.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** Files holding keys and secrets: created readable by their owner only, where the file system knows permissions. */
final class PrivateFiles {
    private PrivateFiles() {
    }

    /** Replaces {@code file} with {@code content}; the new file is never readable by others, not even briefly. */
    static void write(Path file, String content) throws IOException {
        Files.deleteIfExists(file);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(file);
        }
        Files.writeString(file, content, StandardCharsets.US_ASCII);
    }
}
