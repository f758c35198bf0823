package io.switchml.training;

import io.switchml.launch.LineFields;

import java.util.Locale;
import java.util.Map;

/**
 * What a training worker reports when it is done: {@code DONE rank=0 checksum=1f2e3d4c
 * test_accuracy=0.86}. Equal checksums on every worker show that their parameters are bit-identical.
 *
 * @param testAccuracy rank 0 only; NaN elsewhere
 */
public record FinalReport(int rank, long checksum, double testAccuracy) {
    static final String PREFIX = "DONE ";

    public String toLine() {
        return PREFIX + "rank=" + rank + " checksum=" + Long.toHexString(checksum) + " test_accuracy="
                + (Double.isNaN(testAccuracy) ? "NaN" : String.format(Locale.ROOT, "%.6f", testAccuracy));
    }

    /** The report on a line, or null when the line is not one. */
    public static FinalReport parse(String line) {
        if (!line.startsWith(PREFIX)) {
            return null;
        }
        Map<String, String> f = LineFields.parse(line.substring(PREFIX.length()));
        return new FinalReport(Integer.parseInt(f.get("rank")), Long.parseUnsignedLong(f.get("checksum"), 16),
                Double.parseDouble(f.get("test_accuracy")));
    }
}
