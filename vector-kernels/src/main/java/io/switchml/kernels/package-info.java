/**
 * The {@code vector} payload kernels on the JDK's Vector API (docs/ARCHITECTURE.md section 13), found by
 * {@link java.util.ServiceLoader} as a {@code KernelProvider}; used only in JVMs started with
 * {@code --add-modules=jdk.incubator.vector} and chosen with {@code switchml.kernels=vector}.
 */
package io.switchml.kernels;
