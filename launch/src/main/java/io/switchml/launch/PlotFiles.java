package io.switchml.launch;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the bench's and the training's plots go: checked before a run, which may be long, so a bad path fails at once. */
public final class PlotFiles {
    private PlotFiles() {
    }

    /** Fails with the reason when {@code file} cannot be written (a directory, no such parent, no permission). */
    public static void requireWritable(Path file) {
        Path parent = file.toAbsolutePath().getParent();
        if (Files.isDirectory(file)) {
            throw cannotWrite(file, "it is a directory");
        }
        if (parent == null || !Files.isDirectory(parent)) {
            throw cannotWrite(file, "the directory " + parent + " does not exist");
        }
        if (Files.exists(file) ? !Files.isWritable(file) : !Files.isWritable(parent)) {
            throw cannotWrite(file, "no permission to write it");
        }
    }

    /** The error of a plot that could not be written. */
    public static LaunchException cannotWrite(Path file, String why) {
        return new LaunchException("cannot write the plot to " + file + ": " + why);
    }
}
