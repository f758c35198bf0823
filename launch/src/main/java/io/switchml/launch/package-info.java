/**
 * Running the workers of a bench or training run (docs/ARCHITECTURE.md sections 7 and 12): worker JVMs and
 * their report lines ({@link io.switchml.launch.WorkerProcess}, {@link io.switchml.launch.WorkerGroup}), the
 * registry of all-reduce algorithms ({@link io.switchml.launch.AllReduceAlgorithm}, one class each, with the exact
 * sums the bench verifies against: {@link io.switchml.launch.ExactSum}), the all-reduce a worker opens through one
 * ({@link io.switchml.launch.WorkerConnection}), the job's secret
 * ({@link io.switchml.launch.JobSecret}), the switches a launcher embeds ({@link io.switchml.launch.EmbeddedSwitch},
 * {@link io.switchml.launch.EmbeddedHierarchy}) and the emulated rack ({@link io.switchml.launch.Rack},
 * {@link io.switchml.launch.RackSwitch}).
 */
package io.switchml.launch;
