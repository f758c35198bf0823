package io.switchml.launch;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How this project starts a JVM of its own (a worker, a rack's switch): the java that runs this one, so
 * that children get the JDK the switchml command chose (the newest 21+ there is), and the Vector API's
 * module where this JVM has it, so that they run the same payload kernels (docs/ARCHITECTURE.md section 13).
 */
public final class ChildJvm {
    static final String VECTOR_MODULE = "jdk.incubator.vector";
    /** What every JVM started with an incubator module prints first on its standard error. */
    private static final String INCUBATOR_NOTICE = "WARNING: Using incubator modules: " + VECTOR_MODULE;

    private ChildJvm() {
    }

    /** The java command and the options that make a child like this JVM, before the child's own options. */
    public static List<String> command() {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (ModuleLayer.boot().findModule(VECTOR_MODULE).isPresent()) {
            command.add("--add-modules=" + VECTOR_MODULE);
        }
        return command;
    }

    /** Whether a child's output line is the JVM's notice of the module {@link #command()} added: not worth echoing. */
    public static boolean addedModuleNotice(String line) {
        return line.equals(INCUBATOR_NOTICE);
    }
}
