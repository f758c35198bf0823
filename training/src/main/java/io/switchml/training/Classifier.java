package io.switchml.training;

import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.Blocks;
import ai.djl.nn.LambdaBlock;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.core.Linear;
import ai.djl.nn.pooling.Pool;

/**
 * The models {@code switchml train} trains ({@link TrainModel}). The demo's is a multilayer perceptron 784-256-128-10
 * with ReLU (235 146 parameters, 0.9 MiB of float32 gradient per step), small enough for four workers on two cores and
 * accurate enough (about 88 % on Fashion-MNIST after a few epochs) to show that aggregation loses nothing.
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

    /**
     * A small convolutional network for the 28x28 images: 3x3 convolutions of 32 and 64 filters, a 2x2 max-pool, one
     * of 128, another max-pool, then 256-10 dense layers, ReLU throughout (1 701 130 parameters, 6.8 MB of gradient,
     * 94 % of it the first dense layer). No batch normalisation: its running statistics are per worker, and the
     * workers' parameters must stay bit-identical.
     */
    public static Block cnn() {
        return new SequentialBlock()
                .add(new LambdaBlock(images -> new NDList(images.singletonOrThrow().reshape(-1, 1, 28, 28))))
                .add(convolution(32))
                .add(Activation::relu)
                .add(convolution(64))
                .add(Activation::relu)
                .add(Pool.maxPool2dBlock(new Shape(2, 2), new Shape(2, 2)))
                .add(convolution(128))
                .add(Activation::relu)
                .add(Pool.maxPool2dBlock(new Shape(2, 2), new Shape(2, 2)))
                .add(Blocks.batchFlattenBlock())
                .add(Linear.builder().setUnits(256).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(FashionMnist.CLASSES).build());
    }

    /** 3x3, stride 1, padded to keep the image's size. */
    private static Block convolution(int filters) {
        return Conv2d.builder().setKernelShape(new Shape(3, 3)).optPadding(new Shape(1, 1)).setFilters(filters).build();
    }
}
