package io.switchml.djl;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;

/** Small models and synthetic data for the tests. */
final class Models {
    /**
     * PyTorch lets one gradient collector record at a time per process, so the tests' in-process ranks run forward and
     * backward under this lock and aggregate outside it, as separate processes would.
     */
    static final Object BACKWARD = new Object();

    static final int FEATURES = 20;
    static final int CLASSES = 3;

    private Models() {
    }

    /** A trainer for a two-layer perceptron with {@code hidden} units, initialized from {@code seed}. */
    static Trainer mlp(Model model, int hidden, int seed) {
        Engine.getInstance().setRandomSeed(seed);
        model.setBlock(new SequentialBlock().add(Linear.builder().setUnits(hidden).build()).add(Activation::relu)
                .add(Linear.builder().setUnits(CLASSES).build()));
        Trainer trainer = model.newTrainer(new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).optMomentum(0.9f).build()));
        trainer.initialize(new Shape(1, FEATURES));
        return trainer;
    }

    /** A batch of three Gaussian blobs, one per class, drawn for {@code rank} and {@code step}. */
    static NDList batch(NDManager manager, int rank, int step, int size) {
        java.util.Random random = new java.util.Random(1000L * rank + step);
        float[] x = new float[size * FEATURES];
        float[] y = new float[size];
        for (int i = 0; i < size; i++) {
            int label = random.nextInt(CLASSES);
            y[i] = label;
            for (int f = 0; f < FEATURES; f++) {
                x[i * FEATURES + f] = (float) random.nextGaussian() + (f % CLASSES == label ? 2f : 0f);
            }
        }
        return new NDList(manager.create(x, new Shape(size, FEATURES)), manager.create(y));
    }

    /** Forward and backward of one batch (under the process-wide collector lock); the loss. */
    static float backward(Trainer trainer, NDList batch) {
        synchronized (BACKWARD) {
            try (GradientCollector collector = trainer.newGradientCollector()) {
                NDArray loss = trainer.getLoss().evaluate(new NDList(batch.get(1)), trainer.forward(new NDList(batch.get(0))));
                collector.backward(loss);
                return loss.getFloat();
            }
        }
    }
}
