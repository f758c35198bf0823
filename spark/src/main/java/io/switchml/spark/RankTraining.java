package io.switchml.spark;

import io.switchml.training.TrainedParameters;

import java.io.Serializable;
import java.util.List;

/**
 * What one rank's training task returns to the driver.
 *
 * @param reports    its {@code EPOCH} and {@code DONE} report lines
 * @param parameters its trained parameters: rank 0's in full, the others' checksum only (no bytes)
 */
record RankTraining(List<String> reports, TrainedParameters parameters) implements Serializable {
    private static final long serialVersionUID = 1L;

    RankTraining {
        reports = List.copyOf(reports);
    }
}
