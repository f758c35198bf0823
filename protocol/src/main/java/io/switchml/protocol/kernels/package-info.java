/**
 * Every pass over element data (docs/ARCHITECTURE.md section 13): the {@link io.switchml.protocol.kernels.PayloadKernels}
 * interface, the {@code scalar} reference and the {@code array} kernels, {@link io.switchml.protocol.kernels.Kernels}
 * (the run-time choice, {@code switchml.kernels}) and the {@link io.switchml.protocol.kernels.KernelProvider} seam
 * through which other implementations ({@code vector-kernels}) are found. A new kernel is a method here, in every
 * implementation, and a case of the contract test.
 */
package io.switchml.protocol.kernels;
