package io.switchml.spark;

import io.switchml.training.TrainedParameters;
import io.switchml.training.TrainingSummary;

/**
 * A training run's outcome on the driver.
 *
 * @param summary    what {@code switchml train} prints: per-epoch figures, test accuracy, whether every rank's
 *                   parameters ended identical
 * @param parameters rank 0's trained parameters
 */
public record SparkTrainingResult(TrainingSummary summary, TrainedParameters parameters) {
}
