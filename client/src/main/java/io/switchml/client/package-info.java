/**
 * The worker library (docs/ARCHITECTURE.md sections 4, 6, 10 and 11): {@link io.switchml.client.SwitchMLConnection}
 * and {@code SwitchMLContext} (an {@link io.switchml.api.AllReduce} with failover), {@code SwitchSession} (the
 * job at one switch), one {@code WorkerLane} per worker thread with its {@code LossDetector},
 * {@code CongestionWindow} and {@code ReadySlots}, the shared-memory side ({@code SharedMemoryPort},
 * {@code IpcLink}), and {@link io.switchml.client.SwitchMLConfig}, the one parser of worker settings: a new
 * setting is a {@code SwitchMLConfig.Key}.
 */
package io.switchml.client;
