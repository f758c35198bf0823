/**
 * The PyTorch agent (docs/pytorch.md): one JVM per rank that joins the job ({@code JobJoin}), maps the rank's
 * tensors in shared memory ({@code SharedTensors}) and runs the all-reduces its Python side asks for over a
 * Unix socket ({@code Agent}, {@code AgentRequest}).
 */
package io.switchml.agent;
