package io.switchml.controller;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the flood tests print about this JVM's memory. */
public final class ProcessMemory {
    private ProcessMemory() {
    }

    /** This JVM's resident set in KiB, from /proc (0 where there is none). */
    public static long rssKb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }
}
