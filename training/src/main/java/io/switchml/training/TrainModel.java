package io.switchml.training;

import ai.djl.nn.Block;

import java.util.Locale;

/**
 * The model {@code switchml train --model} trains on DJL ({@link Classifier} builds both): the demo's perceptron, or a
 * convolutional network with 7 times its parameters, so that a JVM user can see what aggregation does for a model whose
 * gradient is larger than one packet window.
 */
public enum TrainModel {
    /** 784-256-128-10 with ReLU: 235 146 parameters, 0.94 MB of float32 gradient. */
    MLP(235_146) {
        @Override
        public Block block() {
            return Classifier.mlp();
        }
    },
    /** Three 3x3 convolutions (32, 64, 128 filters, two max-pools) and 256-10 dense layers: 1 701 130 parameters. */
    CNN(1_701_130) {
        @Override
        public Block block() {
            return Classifier.cnn();
        }
    };

    private final long parameters;

    TrainModel(long parameters) {
        this.parameters = parameters;
    }

    /** A fresh, uninitialised block of this model. */
    public abstract Block block();

    /** Its trainable parameters (checked against the built block by the tests). */
    public long parameters() {
        return parameters;
    }

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static TrainModel named(String name) {
        for (TrainModel m : values()) {
            if (m.id().equalsIgnoreCase(name == null ? "" : name.trim())) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown model '" + name + "'; known: mlp, cnn");
    }

    @Override
    public String toString() {
        return id();
    }
}
