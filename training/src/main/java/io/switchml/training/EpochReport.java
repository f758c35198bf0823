package io.switchml.training;

import io.switchml.launch.LineFields;

import java.util.Locale;
import java.util.Map;

/**
 * What a training worker reports after each epoch, as one line on its standard output:
 * {@code EPOCH rank=0 epoch=1 steps=234 images=14976 loss=0.52 accuracy=0.81 seconds=9.8
 * aggregation_seconds=4.1 test_accuracy=0.84}.
 *
 * @param loss               mean training loss over the epoch's batches (this worker's shard)
 * @param accuracy           training accuracy over the epoch (this worker's shard)
 * @param seconds            time in training steps (forward, backward, aggregation, update)
 * @param aggregationSeconds the part of {@code seconds} spent aggregating gradients
 * @param testAccuracy       on the test set, measured by rank 0 only; NaN elsewhere
 */
public record EpochReport(int rank, int epoch, long steps, long images, double loss, double accuracy, double seconds,
                          double aggregationSeconds, double testAccuracy) {
    static final String PREFIX = "EPOCH ";

    public String toLine() {
        return PREFIX + String.format(Locale.ROOT, "rank=%d epoch=%d steps=%d images=%d loss=%.6f accuracy=%.6f seconds=%.6f"
                        + " aggregation_seconds=%.6f test_accuracy=%s", rank, epoch, steps, images, loss, accuracy, seconds,
                aggregationSeconds, Double.isNaN(testAccuracy) ? "NaN" : String.format(Locale.ROOT, "%.6f", testAccuracy));
    }

    /** The report on a line, or null when the line is not one. */
    public static EpochReport parse(String line) {
        if (!line.startsWith(PREFIX)) {
            return null;
        }
        Map<String, String> f = LineFields.parse(line.substring(PREFIX.length()));
        return new EpochReport(Integer.parseInt(f.get("rank")), Integer.parseInt(f.get("epoch")),
                Long.parseLong(f.get("steps")), Long.parseLong(f.get("images")), Double.parseDouble(f.get("loss")),
                Double.parseDouble(f.get("accuracy")), Double.parseDouble(f.get("seconds")),
                Double.parseDouble(f.get("aggregation_seconds")), Double.parseDouble(f.get("test_accuracy")));
    }
}
