/**
 * The wire, with no I/O (docs/ARCHITECTURE.md sections 2 and 8): {@link io.switchml.protocol.AggregationPacket}
 * (a flyweight over one datagram, SwitchML's header), {@link io.switchml.protocol.PayloadSize}, block floating
 * point ({@link io.switchml.protocol.BlockQuantizer}, {@link io.switchml.protocol.PayloadCodec}), which packet
 * goes to which slot ({@link io.switchml.protocol.SlotSchedule}, {@link io.switchml.protocol.SlotRounds}) and the
 * one-round mode ({@link io.switchml.protocol.OneRound}). Owns the packet layout: a new header field starts here.
 * The element loops live in {@code io.switchml.protocol.kernels} (section 13).
 */
package io.switchml.protocol;
