package io.switchml.training;

import io.switchml.launch.ReportLine;

/**
 * What a training worker reports when it is done, as a {@link ReportLine}:
 * {@code DONE {"rank":0,"checksum":2249091277,"testAccuracy":0.86}}. Equal checksums on every worker show that their parameters are bit-identical.
 *
 * @param testAccuracy rank 0 only; NaN elsewhere
 */
public record FinalReport(int rank, long checksum, double testAccuracy) {
    static final String KIND = "DONE";

    public String toLine() {
        return ReportLine.write(KIND, this);
    }

    /** The report on a line, or null when the line is not one. */
    public static FinalReport parse(String line) {
        return ReportLine.read(line, KIND, FinalReport.class);
    }
}
