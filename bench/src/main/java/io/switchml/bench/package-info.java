/**
 * {@code switchml bench} (docs/ARCHITECTURE.md section 7): {@code BenchRunner} starts the worker processes of
 * each algorithm and size, {@code BenchWorker} times and verifies the all-reduces in each, and the rows
 * ({@code BenchRow}, its fields and formats, the plot) and the cost model ({@code switchml cost}) report them.
 */
package io.switchml.bench;
