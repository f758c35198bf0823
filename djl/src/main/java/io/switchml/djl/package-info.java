/**
 * Data-parallel DJL training over any {@link io.switchml.api.AllReduce}: gradient synchronisation with tensor
 * fusion ({@code GradientSynchronizer}) and the initial parameter broadcast ({@code ParameterBroadcast}).
 */
package io.switchml.djl;
