package io.switchml.training;

import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.Blocks;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;

/**
 * The model the demo trains: a multilayer perceptron 784-256-128-10 with ReLU (235 146 parameters,
 * 0.9 MiB of float32 gradient per step), small enough for four workers on two cores and accurate
 * enough (about 88 % on Fashion-MNIST after a few epochs) to show that aggregation loses nothing.
 */
public final class Classifier {
    private Classifier() {
    }

    public static Block mlp() {
        return new SequentialBlock()
                .add(Blocks.batchFlattenBlock(FashionMnist.PIXELS))
                .add(Linear.builder().setUnits(256).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(128).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(FashionMnist.CLASSES).build());
    }
}
