package io.switchml.launch;

import java.util.LinkedHashMap;
import java.util.Map;

/** The {@code key=value key=value} lines worker processes and the bench exchange. */
public final class LineFields {
    private LineFields() {
    }

    /** The fields of {@code text}; words without '=' are skipped. */
    public static Map<String, String> parse(String text) {
        Map<String, String> f = new LinkedHashMap<>();
        for (String part : text.trim().split(" ")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                f.put(part.substring(0, eq), part.substring(eq + 1));
            }
        }
        return f;
    }
}
