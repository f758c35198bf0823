/**
 * Small programs that show the public API as a user calls it: a plain all-reduce, DJL and TensorFlow
 * training, and Spark.
 */
package io.switchml.examples;
