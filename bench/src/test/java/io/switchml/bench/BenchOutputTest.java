package io.switchml.bench;

import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.protocol.DataType;
import io.switchml.protocol.kernels.Kernels;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The output formats (table, JSON, CSV), the fraction of line rate, and the progress lines. */
class BenchOutputTest {
    private static final long RATE = 500_000_000L;
    private static final List<BenchRow> ROWS = List.of(
            new BenchRow("switchml", 4, 64L << 20, "float32", 5, 1112.0, 1102.6, 1229.5, 12, true, RATE, 69_312_000L),
            new BenchRow("ring", 4, 64L << 20, "float32", 5, 1734.7, 1694.4, 1799.1, 0, null, RATE),
            new BenchRow("we\"ird,algo", 2, 4096, "int32", 1, 0.5, 0.5, 0.5, 0, false));

    @Test
    void csvHasTheJsonFieldsInTheirOrderAndParsesBackToTheSameValues() {
        List<String> header = parseCsv(BenchFormat.CSV.header().orElseThrow());
        for (BenchRow row : ROWS) {
            Map<String, String> json = parseJson(BenchFormat.JSON.line(row));
            List<String> csv = parseCsv(BenchFormat.CSV.line(row));
            assertThat(header).containsExactlyElementsOf(json.keySet());
            assertThat(csv).hasSameSizeAs(header);
            for (int i = 0; i < header.size(); i++) {
                String fromJson = json.get(header.get(i));
                assertThat(csv.get(i)).as("%s of %s", header.get(i), row).isEqualTo(fromJson == null ? "" : fromJson);
            }
        }
        assertThat(BenchFormat.CSV.line(ROWS.get(2))).startsWith("\"we\"\"ird,algo\",2,4096,int32,1,0.5000,");
        // no rate, fraction, wire bytes, ratio, topology, kernels, system calls, CPU time or datagrams
        assertThat(BenchFormat.CSV.line(ROWS.get(2))).endsWith(",false,,,,,,,,,,,,,");
        assertThat(parseJson(BenchFormat.JSON.line(ROWS.get(0)))).containsEntry("algo", "switchml")
                .containsEntry("bytes", "67108864").containsEntry("median_ms", "1112.0000")
                .containsEntry("rate_bps", "500000000").containsEntry("line_rate_fraction", "0.9656")
                .containsEntry("wire_bytes", "69312000").containsEntry("wire_ratio", "1.0328")
                .containsEntry("kernels", Kernels.label());
        assertThat(BenchFormat.JSON.line(ROWS.get(1))).contains("\"verified\": null");
    }

    @Test
    void lineRateFractionIsTheIdealTimeOverTheMedianAndAbsentWithoutARate() {
        // 64 MiB through 500 Mbit/s takes 1.0737 s; measured 1.112 s.
        assertThat(ROWS.get(0).lineRateFraction()).isCloseTo((64L << 23) / 5e8 / 1.112, within(1e-12))
                .isCloseTo(0.9656, within(1e-4));
        assertThat(ROWS.get(1).lineRateFraction()).isCloseTo(0.6190, within(1e-4));
        assertThat(ROWS.get(2).lineRateFraction()).isNull();
        assertThat(BenchFormat.TABLE.line(ROWS.get(0))).contains("    0.966   ").endsWith("yes        -               -       -                     -");
        assertThat(BenchFormat.TABLE.line(ROWS.get(2))).contains("        -   ").endsWith("NO        -               -       -                     -");
        assertThat(BenchFormat.TABLE.header().orElseThrow()).contains(" busbw_Gbps line_rate ", " max_ms  wire/size ");
        assertThat(BenchFormat.TABLE.line(ROWS.get(0))).contains(" 1.0328 ");
        assertThat(BenchFormat.JSON.header()).isEmpty();
    }

    @Test
    void formatsByName() {
        assertThat(BenchFormat.named("CSV")).isEqualTo(BenchFormat.CSV);
        assertThatThrownBy(() -> BenchFormat.named("xml")).hasMessage("unknown format 'xml'; known: table, json, csv");
    }

    @Test
    void progressCountsRowsAndEstimatesTheTimeLeftFromTheBytesDone() {
        BenchOptions options = new BenchOptions(List.of(2, 4), List.of(1L << 20, 3L << 20), 1, 0, false, DataType.FLOAT32,
                null, Map.of(), 1, 1, Duration.ofMinutes(1), 0, List.of(AllReduceAlgorithm.switchMl(), AllReduceAlgorithm.named("ring")));
        AtomicLong now = new AtomicLong(7_000_000_000L);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BenchProgress progress = new BenchProgress(new PrintStream(out, true, StandardCharsets.UTF_8), options, now::get);
        progress.groupStarted(AllReduceAlgorithm.switchMl(), 2);
        now.addAndGet(2_000_000_000L);
        progress.rowDone(new BenchRow("switchml", 2, 1L << 20, "float32", 1, 1, 1, 1, 0, null));
        now.addAndGet(3_000_000_000L);
        progress.rowDone(new BenchRow("switchml", 2, 3L << 20, "float32", 1, 1, 1, 1, 0, null));
        // 8 rows of 16 MiB in all: after 1 MiB in 2 s, 15 MiB are left (30 s); after 4 MiB in 5 s, 12 MiB (15 s).
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).containsExactly(
                "[0/8] switchml n=2: starting 2 worker processes",
                "[1/8] switchml n=2 1MiB done in 2.00 s, elapsed 00:02, ~00:30 left",
                "[2/8] switchml n=2 3MiB done in 3.00 s, elapsed 00:05, ~00:15 left");
        assertThat(BenchProgress.clock(3_725_000_000_000L)).isEqualTo("1:02:05");
    }

    /** One CSV record per RFC 4180 (quoted cells, doubled quotes). */
    private static List<String> parseCsv(String line) {
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted && c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                cell.append('"');
                i++;
            } else if (c == '"') {
                quoted = !quoted;
            } else if (c == ',' && !quoted) {
                cells.add(cell.toString());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        cells.add(cell.toString());
        return cells;
    }

    /** A flat JSON object: string values unescaped, other values as written, null as null; keys in order. */
    private static Map<String, String> parseJson(String line) {
        Map<String, String> fields = new LinkedHashMap<>();
        int[] at = {line.indexOf('{') + 1};
        while (true) {
            skipSpaces(line, at);
            if (line.charAt(at[0]) == '}') {
                return fields;
            }
            String key = jsonString(line, at);
            skipSpaces(line, at);
            assertThat(line.charAt(at[0]++)).isEqualTo(':');
            skipSpaces(line, at);
            String value;
            if (line.charAt(at[0]) == '"') {
                value = jsonString(line, at);
            } else {
                int end = at[0];
                while (",} ".indexOf(line.charAt(end)) < 0) {
                    end++;
                }
                value = line.substring(at[0], end);
                at[0] = end;
                value = value.equals("null") ? null : value;
            }
            fields.put(key, value);
            skipSpaces(line, at);
            if (line.charAt(at[0]) == ',') {
                at[0]++;
            }
        }
    }

    private static void skipSpaces(String s, int[] at) {
        while (s.charAt(at[0]) == ' ') {
            at[0]++;
        }
    }

    private static String jsonString(String s, int[] at) {
        assertThat(s.charAt(at[0]++)).isEqualTo('"');
        StringBuilder b = new StringBuilder();
        for (char c = s.charAt(at[0]++); c != '"'; c = s.charAt(at[0]++)) {
            b.append(c == '\\' ? s.charAt(at[0]++) : c);
        }
        return b.toString();
    }
}
