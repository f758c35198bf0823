/**
 * Fashion-MNIST training through any all-reduce (the main job, {@code switchml train} and {@code demo}):
 * {@code TrainRunner} starts the worker processes, {@code TrainWorker} (DJL) and {@code TensorFlowWorker}
 * train a 784-256-128-10 perceptron, and the epoch and final reports make the run's summary.
 */
package io.switchml.training;
