package io.switchml.training;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.Batch;
import ai.djl.training.listener.TrainingListener;

import java.util.concurrent.ConcurrentHashMap;

/**
 * One training batch as DJL's {@code EasyTrain.trainBatch} runs it on one device (forward, loss, backward, then the
 * listeners: the gradient synchronizer among them), except that forward and backward hold a lock shared by every
 * rank in this JVM. PyTorch lets one gradient collector record at a time per process ("A PtGradientCollector is
 * already collecting"), and Spark's local mode runs ranks as threads of one JVM: they take turns to record, and
 * aggregate outside the lock, where they wait for each other (docs/ARCHITECTURE.md section 5). One rank per
 * process never waits for it.
 */
final class BatchStep {
    private static final Object RECORDING = new Object();

    private BatchStep() {
    }

    /** Forward and backward of {@code batch} under the lock, then the training listeners; the caller steps. */
    static void train(Trainer trainer, Batch batch) {
        NDList data = batch.getData();
        NDList labels = batch.getLabels();
        TrainingListener.BatchData batchData = new TrainingListener.BatchData(batch, new ConcurrentHashMap<>(),
                new ConcurrentHashMap<>());
        synchronized (RECORDING) {
            try (GradientCollector collector = trainer.newGradientCollector()) {
                NDList predictions = trainer.forward(data, labels);
                NDArray loss = trainer.getLoss().evaluate(labels, predictions);
                collector.backward(loss);
                batchData.getLabels().put(labels.get(0).getDevice(), labels);
                batchData.getPredictions().put(predictions.get(0).getDevice(), predictions);
            }
        }
        trainer.notifyListeners(listener -> listener.onTrainingBatch(trainer, batchData));
    }
}
