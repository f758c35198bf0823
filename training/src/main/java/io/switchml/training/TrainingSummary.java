package io.switchml.training;

import io.switchml.protocol.kernels.Kernels;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The outcome of a training run, as {@code switchml train --format json} prints it.
 *
 * @param imagesPerSecond     training images processed per second of step time, over all workers
 * @param aggregationFraction the share of step time spent aggregating gradients (mean over workers)
 * @param parametersIdentical whether every worker ended with bit-identical parameters (equal checksums)
 * @param epochs              per-epoch summaries, in order
 * @param rateBps             the emulated rack's line rate in bit/s; null outside the rack
 * @param target              the test accuracy {@link #secondsToTarget()} measures the time to
 * @param transport           how the workers reached the embedded switch (shared-memory, udp); null otherwise
 * @param model               what was trained ({@link TrainModel#id()}); null when not said
 */
public record TrainingSummary(String aggregation, int workers, int epochCount, int batchSize, double testAccuracy,
                              double imagesPerSecond, double aggregationFraction, boolean parametersIdentical,
                              double wallSeconds, List<EpochSummary> epochs, Long rateBps, double target,
                              String transport, String model) {
    /** The default target accuracy: reached by every method in this project's 3-epoch runs, most of them in epoch 1. */
    public static final double DEFAULT_TARGET = 0.82;

    /** Without the model's name. */
    public TrainingSummary(String aggregation, int workers, int epochCount, int batchSize, double testAccuracy,
                           double imagesPerSecond, double aggregationFraction, boolean parametersIdentical,
                           double wallSeconds, List<EpochSummary> epochs, Long rateBps, double target, String transport) {
        this(aggregation, workers, epochCount, batchSize, testAccuracy, imagesPerSecond, aggregationFraction,
                parametersIdentical, wallSeconds, epochs, rateBps, target, transport, null);
    }

    /** Without a transport to report. */
    public TrainingSummary(String aggregation, int workers, int epochCount, int batchSize, double testAccuracy,
                           double imagesPerSecond, double aggregationFraction, boolean parametersIdentical,
                           double wallSeconds, List<EpochSummary> epochs, Long rateBps, double target) {
        this(aggregation, workers, epochCount, batchSize, testAccuracy, imagesPerSecond, aggregationFraction,
                parametersIdentical, wallSeconds, epochs, rateBps, target, null);
    }

    /** This summary, saying how the workers reached the switch. */
    public TrainingSummary withTransport(String how) {
        return new TrainingSummary(aggregation, workers, epochCount, batchSize, testAccuracy, imagesPerSecond,
                aggregationFraction, parametersIdentical, wallSeconds, epochs, rateBps, target, how, model);
    }

    /** This summary, saying what was trained. */
    public TrainingSummary withModel(TrainModel trained) {
        return new TrainingSummary(aggregation, workers, epochCount, batchSize, testAccuracy, imagesPerSecond,
                aggregationFraction, parametersIdentical, wallSeconds, epochs, rateBps, target, transport, trained.id());
    }

    /** Outside the rack, with the default target. */
    public TrainingSummary(String aggregation, int workers, int epochCount, int batchSize, double testAccuracy,
                           double imagesPerSecond, double aggregationFraction, boolean parametersIdentical,
                           double wallSeconds, List<EpochSummary> epochs) {
        this(aggregation, workers, epochCount, batchSize, testAccuracy, imagesPerSecond, aggregationFraction,
                parametersIdentical, wallSeconds, epochs, null, DEFAULT_TARGET);
    }

    /**
     * The run's outcome from every rank's report lines ({@link EpochReport}, {@link FinalReport}; other lines are
     * ignored), gathered however the ranks ran (a Spark stage, ranks on several hosts).
     *
     * @throws IllegalStateException when not every rank reported its final parameters
     */
    public static TrainingSummary ofReportLines(String aggregation, int workers, int epochCount, int batchSize,
                                                Iterable<String> lines, double wallSeconds, Long rateBps, double target) {
        List<EpochReport> reports = new ArrayList<>();
        List<FinalReport> finals = new ArrayList<>();
        for (String line : lines) {
            EpochReport epoch = EpochReport.parse(line);
            if (epoch != null) {
                reports.add(epoch);
            }
            FinalReport last = FinalReport.parse(line);
            if (last != null) {
                finals.add(last);
            }
        }
        if (finals.size() != workers) {
            throw new IllegalStateException(finals.size() + " of " + workers + " ranks reported their final parameters");
        }
        return of(aggregation, workers, epochCount, batchSize, reports, finals, wallSeconds, rateBps, target);
    }

    /**
     * The run's outcome from every rank's reports: {@code reports} every rank's epoch reports, {@code finals} every
     * rank's final report (rank 0's carries the test accuracy); the parameters are identical when every checksum is.
     */
    public static TrainingSummary of(String aggregation, int workers, int epochCount, int batchSize,
                                     List<EpochReport> reports, Collection<FinalReport> finals,
                                     double wallSeconds, Long rateBps, double target) {
        Map<Integer, List<EpochReport>> byEpoch = new TreeMap<>();
        for (EpochReport r : reports) {
            byEpoch.computeIfAbsent(r.epoch(), e -> new ArrayList<>()).add(r);
        }
        List<EpochSummary> done = byEpoch.values().stream().map(EpochSummary::of).toList();
        boolean identical = finals.stream().mapToLong(FinalReport::checksum).distinct().count() == 1;
        double test = finals.stream().filter(f -> f.rank() == 0).mapToDouble(FinalReport::testAccuracy).findFirst()
                .orElse(Double.NaN);
        long images = done.stream().mapToLong(EpochSummary::images).sum();
        double imageSeconds = done.stream().mapToDouble(EpochSummary::seconds).sum();
        double aggregationSeconds = reports.stream().mapToDouble(EpochReport::aggregationSeconds).sum();
        double stepSeconds = reports.stream().mapToDouble(EpochReport::seconds).sum();
        return new TrainingSummary(aggregation, workers, epochCount, batchSize, test,
                imageSeconds == 0 ? 0 : images / imageSeconds, stepSeconds == 0 ? 0 : aggregationSeconds / stepSeconds,
                identical, wallSeconds, done, rateBps, target);
    }

    /**
     * Training time to the target test accuracy: the step time (forward, backward, aggregation, update; the slowest
     * worker's per epoch) of the epochs up to the first whose test accuracy reaches {@link #target()}, so measured at
     * epoch ends; NaN when no epoch reached it.
     */
    public double secondsToTarget() {
        double seconds = 0;
        for (EpochSummary e : epochs) {
            seconds += e.seconds();
            if (e.testAccuracy() >= target) {
                return seconds;
            }
        }
        return Double.NaN;
    }

    /** The first epoch whose test accuracy reaches the target, or 0 when none did. */
    public int epochsToTarget() {
        for (EpochSummary e : epochs) {
            if (e.testAccuracy() >= target) {
                return e.epoch();
            }
        }
        return 0;
    }
    /**
     * One epoch over all workers.
     *
     * @param loss     mean over workers of their mean training loss
     * @param accuracy training accuracy over all workers' images
     */
    public record EpochSummary(int epoch, long images, double loss, double accuracy, double testAccuracy,
                               double imagesPerSecond, double aggregationFraction, double seconds) {
        static EpochSummary of(List<EpochReport> reports) {
            long images = 0;
            double loss = 0;
            double correct = 0;
            double seconds = 0;
            double aggregation = 0;
            double test = Double.NaN;
            for (EpochReport r : reports) {
                images += r.images();
                loss += r.loss() / reports.size();
                correct += r.accuracy() * r.images();
                seconds = Math.max(seconds, r.seconds());
                aggregation += r.seconds() == 0 ? 0 : r.aggregationSeconds() / r.seconds() / reports.size();
                if (r.rank() == 0) {
                    test = r.testAccuracy();
                }
            }
            return new EpochSummary(reports.get(0).epoch(), images, loss, images == 0 ? Double.NaN : correct / images, test,
                    seconds == 0 ? 0 : images / seconds, aggregation, seconds);
        }
    }

    public String toJson() {
        StringBuilder e = new StringBuilder();
        for (EpochSummary s : epochs) {
            e.append(e.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT,
                    "{\"epoch\": %d, \"images\": %d, \"loss\": %s, \"accuracy\": %s, \"test_accuracy\": %s,"
                            + " \"images_per_s\": %s, \"aggregation_fraction\": %s, \"seconds\": %s}",
                    s.epoch(), s.images(), number(s.loss()), number(s.accuracy()), number(s.testAccuracy()),
                    number(s.imagesPerSecond()), number(s.aggregationFraction()), number(s.seconds())));
        }
        return String.format(Locale.ROOT, "{\"aggregation\": \"%s\", \"model\": %s, \"workers\": %d, \"epochs\": %d, \"batch_size\": %d,"
                        + " \"test_accuracy\": %s, \"images_per_s\": %s, \"aggregation_fraction\": %s,"
                        + " \"parameters_identical\": %s, \"wall_seconds\": %s, \"rate_bps\": %s, \"target_accuracy\": %s,"
                        + " \"seconds_to_target\": %s, \"transport\": %s, \"kernels\": %s, \"per_epoch\": [%s]}",
                aggregation, model == null ? "null" : "\"" + model + "\"", workers, epochCount, batchSize,
                number(testAccuracy), number(imagesPerSecond),
                number(aggregationFraction), parametersIdentical, number(wallSeconds),
                rateBps == null ? "null" : rateBps.toString(), number(target), number(secondsToTarget()),
                transport == null ? "null" : "\"" + transport + "\"", transport == null ? "null" : "\"" + Kernels.label() + "\"", e);
    }

    private static String number(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.6g", v) : "null";
    }
}
