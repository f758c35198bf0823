package io.switchml.training;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.DataType;
import ai.djl.training.Trainer;
import ai.djl.training.listener.TrainingListenerAdapter;

import java.util.Map;

/** Training loss and accuracy over an epoch, from each batch's predictions (a listener, like the gradient synchronizer). */
final class EpochMeter extends TrainingListenerAdapter {
    private double lossSum;
    private long batches;
    private long correct;
    private long images;

    @Override
    public void onTrainingBatch(Trainer trainer, BatchData batchData) {
        for (Map.Entry<Device, NDList> e : batchData.getPredictions().entrySet()) {
            NDList labels = batchData.getLabels().get(e.getKey());
            NDList predictions = e.getValue();
            try (NDArray loss = trainer.getLoss().evaluate(labels, predictions);
                 NDArray predicted = predictions.singletonOrThrow().argMax(1).toType(DataType.FLOAT32, false);
                 NDArray hits = predicted.eq(labels.singletonOrThrow())) {
                lossSum += loss.getFloat();
                batches++;
                correct += hits.countNonzero().getLong();
                images += hits.size();
            }
        }
    }

    void reset() {
        lossSum = 0;
        batches = 0;
        correct = 0;
        images = 0;
    }

    double meanLoss() {
        return batches == 0 ? Double.NaN : lossSum / batches;
    }

    double accuracy() {
        return images == 0 ? Double.NaN : (double) correct / images;
    }

    long images() {
        return images;
    }
}
