package io.switchml.client;

import io.switchml.protocol.SlotSchedule;

/** One worker thread's contiguous share [from, to) of an operation, cut into blocks. */
final class LaneTask {
    final Operation<?> operation;
    final int from;
    final int to;
    final SlotSchedule schedule;

    LaneTask(Operation<?> operation, int from, int to, int elementsPerPacket, int window) {
        this.operation = operation;
        this.from = from;
        this.to = to;
        int blocks = (to - from + elementsPerPacket - 1) / elementsPerPacket;
        // Always a bootstrap round: it carries the block exponents (float32) and, for every type,
        // the operation's descriptor (see OperationDescriptor).
        this.schedule = new SlotSchedule(blocks, window, true);
    }
}
