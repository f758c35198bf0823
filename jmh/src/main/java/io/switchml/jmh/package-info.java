/**
 * JMH microbenchmarks (BENCHMARKS.md): the quantiser and payload kernels, the packet codec, and allocation
 * per all-reduce; the switch program's benchmark lives with the dataplane's tests.
 */
package io.switchml.jmh;
