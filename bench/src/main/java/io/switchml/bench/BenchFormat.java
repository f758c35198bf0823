package io.switchml.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * How rows are printed: an aligned table for people, JSON (one object per line) or CSV (a header,
 * then one line per row) for tools. JSON and CSV print the same {@link BenchField}s in the same order;
 * an unknown value is {@code null} in JSON and an empty cell in CSV.
 */
public enum BenchFormat {
    TABLE {
        @Override
        public Optional<String> header() {
            return Optional.of(String.format(Locale.ROOT, "%-9s %7s %10s %7s %10s %10s %10s %10s %10s %10s %9s %11s %8s %8s %8s %15s %7s %21s",
                    "algo", "workers", "size", "type", "median_ms", "min_ms", "max_ms", "wire/size", "algbw_Gbps",
                    "busbw_Gbps", "line_rate", "ATE/s", "retrans", "verified", "topology", "syscalls_w/sw", "cpu_s",
                    "dgrams_out/in(pkt/dg)"));
        }

        @Override
        public String line(BenchRow row) {
            Double fraction = row.lineRateFraction();
            Double wire = row.wireRatio();
            return String.format(Locale.ROOT, "%-9s %7d %10s %7s %10.3f %10.3f %10.3f %10s %10.3f %10.3f %9s %11.3e %8d %8s %8s %15s %7s %21s",
                    row.algo(), row.workers(), ByteSize.format(row.bytes()), row.type(), row.medianMs(), row.minMs(),
                    row.maxMs(), wire == null ? "-" : String.format(Locale.ROOT, "%.4f", wire), row.algbwGbps(),
                    row.busbwGbps(),
                    fraction == null ? "-" : String.format(Locale.ROOT, "%.3f", fraction), row.atePerSecond(),
                    row.retransmissions(), row.verified() == null ? "-" : row.verified() ? "yes" : "NO",
                    row.topology() == null ? "-" : row.topology(), syscalls(row),
                    row.cpuSeconds() == null ? "-" : String.format(Locale.ROOT, "%.2f", row.cpuSeconds()), datagrams(row));
        }
    },
    JSON {
        @Override
        public Optional<String> header() {
            return Optional.empty();
        }

        @Override
        public String line(BenchRow row) {
            return Arrays.stream(BenchField.values())
                    .map(f -> jsonString(f.key()) + ": " + jsonValue(f, f.valueOf(row)))
                    .collect(Collectors.joining(", ", "{", "}"));
        }
    },
    CSV {
        @Override
        public Optional<String> header() {
            return Optional.of(Arrays.stream(BenchField.values()).map(f -> csvCell(f.key()))
                    .collect(Collectors.joining(",")));
        }

        @Override
        public String line(BenchRow row) {
            return Arrays.stream(BenchField.values()).map(f -> csvCell(f.valueOf(row)))
                    .collect(Collectors.joining(","));
        }
    };

    /** The line printed before the rows, if the format has one. */
    public abstract Optional<String> header();

    /** One row, on one line. */
    public abstract String line(BenchRow row);

    /** The format of this name (table, json, csv; any case). */
    public static BenchFormat named(String name) {
        for (BenchFormat f : values()) {
            if (f.name().equalsIgnoreCase(name.trim())) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown format '" + name + "'; known: table, json, csv");
    }

    /** The table's system calls per all-reduce: a worker's (the mean) / the switch's; "-" where not counted. */
    private static String syscalls(BenchRow row) {
        if (row.workerSyscalls() == null && row.switchSyscalls() == null) {
            return "-";
        }
        return (row.workerSyscalls() == null ? "-" : row.workerSyscalls().toString()) + "/"
                + (row.switchSyscalls() == null ? "-" : row.switchSyscalls().toString());
    }

    /**
     * The table's datagrams per all-reduce of a worker, to the switch / from it, with the packets per datagram each
     * way: {@code 1171/1171(7.0/7.0)}; "-" where not known.
     */
    private static String datagrams(BenchRow row) {
        BenchRow.Datagrams d = row.datagrams();
        return d == null ? "-" : String.format(Locale.ROOT, "%.0f/%.0f(%.1f/%.1f)", d.out(), d.in(), d.packetsPerOut(),
                d.packetsPerIn());
    }

    private static String jsonValue(BenchField field, String value) {
        if (value == null) {
            return "null";
        }
        return field.text() ? jsonString(value) : value;
    }

    private static String jsonString(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    /** RFC 4180: a cell with a comma, a quote or a line break is quoted, its quotes doubled; null is empty. */
    private static String csvCell(String s) {
        if (s == null) {
            return "";
        }
        if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0 && s.indexOf('\r') < 0) {
            return s;
        }
        return '"' + s.replace("\"", "\"\"") + '"';
    }
}
