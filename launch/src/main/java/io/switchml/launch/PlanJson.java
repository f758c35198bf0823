package io.switchml.launch;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonParseException;
import com.google.gson.TypeAdapter;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.gson.stream.JsonWriter;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The one serialiser of what a launcher hands a worker process (docs/ARCHITECTURE.md section 12): a plan record, worker settings included, as one JSON argument. Records are written
 * field by field and read back through their canonical constructor, so a plan validates itself
 * on both sides; a new field needs no code here.
 */
public final class PlanJson {
    private static final Gson GSON = new GsonBuilder()
            .registerTypeHierarchyAdapter(Path.class, new PathAdapter())
            .registerTypeHierarchyAdapter(AllReduceAlgorithm.class, new AlgorithmAdapter().nullSafe())
            .disableHtmlEscaping()
            .create();

    private PlanJson() {
    }

    public static String write(Record plan) {
        return GSON.toJson(plan);
    }

    /** @param what names the worker in errors, e.g. "training worker" */
    public static <T extends Record> T read(String json, Class<T> type, String what) {
        try {
            T plan = GSON.fromJson(json, type);
            if (plan == null) {
                throw new IllegalArgumentException(what + ": an empty plan");
            }
            return plan;
        } catch (JsonParseException e) {
            throw new IllegalArgumentException(what + ": the plan is not a " + type.getSimpleName() + " in JSON: "
                    + e.getMessage(), e);
        } catch (RuntimeException e) {
            // Gson wraps what the record's constructor threw: a value out of range, a missing field.
            Throwable refusal = e.getCause() != null ? e.getCause() : e;
            throw new IllegalArgumentException(what + ": the plan is refused: " + refusal.getMessage(), refusal);
        }
    }

    /** The plan a worker's {@code main} was given as its one argument. */
    public static <T extends Record> T fromArguments(String[] args, Class<T> type, String what) {
        if (args.length != 1) {
            throw new IllegalArgumentException(what + " takes one argument, its plan in JSON; got " + args.length);
        }
        return read(args[0], type, what);
    }

    /** A path as its string, not as Gson's reflection over the file system's classes. */
    private static final class PathAdapter extends TypeAdapter<Path> {
        @Override
        public void write(JsonWriter out, Path path) throws IOException {
            if (path == null) {
                out.nullValue();
            } else {
                out.value(path.toString());
            }
        }

        @Override
        public Path read(JsonReader in) throws IOException {
            if (in.peek() == JsonToken.NULL) {
                in.nextNull();
                return null;
            }
            return Path.of(in.nextString());
        }
    }

    /** An algorithm as its registered name, read back through the registry (an unknown name is refused). */
    private static final class AlgorithmAdapter extends TypeAdapter<AllReduceAlgorithm> {
        @Override
        public void write(JsonWriter out, AllReduceAlgorithm algorithm) throws IOException {
            out.value(algorithm.id());
        }

        @Override
        public AllReduceAlgorithm read(JsonReader in) throws IOException {
            return AllReduceAlgorithm.named(in.nextString());
        }
    }
}
