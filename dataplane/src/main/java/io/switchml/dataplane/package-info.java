/**
 * The software aggregation switch: SwitchML's switch program (NSDI 2021) on the JVM, behind UDP
 * ports served by Netty.
 *
 * <p>Public API: {@link io.switchml.dataplane.AggregationSwitch} started from a
 * {@link io.switchml.dataplane.SwitchConfig}, with jobs described by
 * {@link io.switchml.dataplane.JobSpec} and {@link io.switchml.dataplane.WorkerEndpoint}. Jobs take
 * their slots from an aggregator pool ({@link io.switchml.dataplane.SlotPool}) when installed.
 *
 * <p>The per-packet program reads like the blocks of SwitchML's P4 program:
 * <table>
 *   <caption>P4 blocks and their classes</caption>
 *   <tr><th>P4 block</th><th>class</th></tr>
 *   <tr><td>parser, UDP receiver (worker table)</td><td>{@code PacketValidator}, {@code WorkerTable}</td></tr>
 *   <tr><td>drop simulator</td><td>{@code DropSimulator}</td></tr>
 *   <tr><td>(this project's addition: late duplicates of finished rounds)</td><td>{@code RoundChecker}</td></tr>
 *   <tr><td>bitmap checker</td><td>{@code BitmapChecker}</td></tr>
 *   <tr><td>workers counter</td><td>{@code WorkersCounter}</td></tr>
 *   <tr><td>exponents</td><td>{@code Exponents}</td></tr>
 *   <tr><td>processor</td><td>{@code Processor}</td></tr>
 *   <tr><td>next step selector</td><td>{@code NextStepSelector}</td></tr>
 *   <tr><td>UDP sender (egress, replication)</td><td>{@code ResultSender}</td></tr>
 * </table>
 * {@code SwitchProgram} runs them in order for one packet; {@code ControlPlane} publishes the
 * tables they read; {@code SwitchPort} and {@code SwitchPortHandler} connect a UDP port to a
 * program instance, one receive thread each.
 */
package io.switchml.dataplane;
