package io.switchml.cli;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;

import java.io.PrintStream;
import java.util.Map;
import java.util.function.Consumer;

/** Prints a ctl answer as a table for people or as one JSON object for scripts (--format). */
final class CtlOutput {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();

    private final boolean json;
    private final PrintStream out;

    private CtlOutput(boolean json, PrintStream out) {
        this.json = json;
        this.out = out;
    }

    static CtlOutput of(String format, PrintStream out) {
        if (!"table".equals(format) && !"json".equals(format)) {
            throw new IllegalArgumentException("--format must be table or json, not " + format);
        }
        return new CtlOutput("json".equals(format), out);
    }

    /**
     * Prints {@code object} (maps, lists, strings, numbers, booleans) as JSON, or runs {@code table}
     * to print the table.
     */
    void print(Map<String, Object> object, Consumer<PrintStream> table) {
        if (json) {
            out.println(GSON.toJson(object));
        } else {
            table.accept(out);
        }
        out.flush();
    }
}
