package io.switchml.launch;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code key=value} arguments a launcher passes to a worker process: keys starting with
 * {@code switchml.} are the worker's all-reduce configuration, the others its plan.
 */
public record WorkerArguments(Map<String, String> config, Map<String, String> plan, String what) {
    /** @param what names the worker in errors, e.g. "training worker" */
    public static WorkerArguments parse(String[] args, String what) {
        Map<String, String> config = new LinkedHashMap<>();
        Map<String, String> plan = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException(what + " argument '" + arg + "' is not key=value");
            }
            String key = arg.substring(0, eq);
            (key.startsWith("switchml.") ? config : plan).put(key, arg.substring(eq + 1));
        }
        return new WorkerArguments(config, plan, what);
    }

    /** A plan value; an error naming it when it is missing. */
    public String required(String key) {
        String v = plan.get(key);
        if (v == null) {
            throw new IllegalArgumentException(what + " argument " + key + "=... is missing");
        }
        return v;
    }
}
