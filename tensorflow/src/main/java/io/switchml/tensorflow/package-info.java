/**
 * Data-parallel TensorFlow Java training over any {@link io.switchml.api.AllReduce}, in Horovod's shape:
 * {@code DistributedOptimizer} (fusion inside the graph, the all-reduce reading and writing tensor memory in
 * place) and {@code VariableBroadcast}.
 */
package io.switchml.tensorflow;
