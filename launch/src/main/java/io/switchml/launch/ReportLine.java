package io.switchml.launch;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonParseException;
import com.google.gson.Strictness;
import com.google.gson.TypeAdapter;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonWriter;
import io.switchml.collectives.Endpoints;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * The one form of what worker processes and their launchers tell each other line by line (docs/ARCHITECTURE.md
 * section 12): a word naming the kind ({@code RESULT}, {@code EPOCH}, {@code ENDPOINT}, ...), a space, and the record
 * in JSON, written field by field and read back through its canonical constructor, as {@link PlanJson} does for
 * plans; a new field needs no code here. Endpoints are written {@code host:port}; NaN and infinities as JSON's
 * extension (a rank without a test accuracy reports NaN).
 */
public final class ReportLine {
    private static final Gson GSON = new GsonBuilder()
            .registerTypeAdapter(InetSocketAddress.class, new EndpointAdapter().nullSafe())
            .serializeSpecialFloatingPointValues()
            .setStrictness(Strictness.LENIENT) // reads back the NaN it wrote
            .disableHtmlEscaping()
            .create();

    private ReportLine() {
    }

    /** {@code kind}, a space and the report: one line. */
    public static String write(String kind, Record report) {
        return kind + " " + GSON.toJson(report);
    }

    /** The report on {@code line} when it is of this kind, else null; an error when it is of this kind but malformed. */
    public static <T extends Record> T read(String line, String kind, Class<T> type) {
        if (line == null || !line.startsWith(kind + " ")) {
            return null;
        }
        String json = line.substring(kind.length() + 1);
        try {
            T report = GSON.fromJson(json, type);
            if (report == null) {
                throw new IllegalArgumentException("an empty " + kind + " line");
            }
            return report;
        } catch (JsonParseException e) {
            throw new IllegalArgumentException("a " + kind + " line that is not a " + type.getSimpleName() + " in JSON: "
                    + e.getMessage() + ": " + line, e);
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            // Gson wraps what the record's constructor threw: a value out of range, a missing field.
            Throwable refusal = e.getCause() != null ? e.getCause() : e;
            throw new IllegalArgumentException("a " + kind + " line is refused: " + refusal.getMessage() + ": " + line,
                    refusal);
        }
    }

    /** An endpoint as {@code host:port} (null handled by {@code nullSafe()}). */
    private static final class EndpointAdapter extends TypeAdapter<InetSocketAddress> {
        @Override
        public void write(JsonWriter out, InetSocketAddress endpoint) throws IOException {
            out.value(Endpoints.format(List.of(endpoint)));
        }

        @Override
        public InetSocketAddress read(JsonReader in) throws IOException {
            return Endpoints.parseOne(in.nextString());
        }
    }
}
