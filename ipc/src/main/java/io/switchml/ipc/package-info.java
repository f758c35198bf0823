/**
 * The switch's shared-memory port as both sides map it (docs/ARCHITECTURE.md section 11): per job
 * one {@link io.switchml.ipc.RequestRing} for each switch port its threads use (workers write, the switch reads)
 * and one {@link io.switchml.ipc.ResultBoard} (the switch writes each result once, every worker reads it),
 * the {@link io.switchml.ipc.WakeFlag} and the idle strategy {@link io.switchml.ipc.IpcPoller}.
 */
package io.switchml.ipc;
