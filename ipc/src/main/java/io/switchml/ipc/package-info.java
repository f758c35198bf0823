/**
 * The switch's shared-memory port as both sides map it (docs/ARCHITECTURE.md section 11): one
 * {@link io.switchml.ipc.RequestRing} per switch port (workers write, the switch reads), one
 * {@link io.switchml.ipc.ResultBoard} per job (the switch writes each result once, every worker reads it),
 * the {@link io.switchml.ipc.WakeFlag} and the idle strategy {@link io.switchml.ipc.IpcPoller}.
 */
package io.switchml.ipc;
