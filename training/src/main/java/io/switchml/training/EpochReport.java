package io.switchml.training;

import io.switchml.launch.ReportLine;

/**
 * What a training worker reports after each epoch, as one {@link ReportLine} on its standard output:
 * {@code EPOCH {"rank":0,"epoch":1,"steps":234,"images":14976,"loss":0.52,"accuracy":0.81,"seconds":9.8,
 * "aggregationSeconds":4.1,"testAccuracy":0.84}}.
 *
 * @param loss               mean training loss over the epoch's batches (this worker's shard)
 * @param accuracy           training accuracy over the epoch (this worker's shard)
 * @param seconds            time in training steps (forward, backward, aggregation, update)
 * @param aggregationSeconds the part of {@code seconds} spent aggregating gradients
 * @param testAccuracy       on the test set, measured by rank 0 only; NaN elsewhere
 */
public record EpochReport(int rank, int epoch, long steps, long images, double loss, double accuracy, double seconds,
                          double aggregationSeconds, double testAccuracy) {
    static final String KIND = "EPOCH";

    public String toLine() {
        return ReportLine.write(KIND, this);
    }

    /** The report on a line, or null when the line is not one. */
    public static EpochReport parse(String line) {
        return ReportLine.read(line, KIND, EpochReport.class);
    }
}
