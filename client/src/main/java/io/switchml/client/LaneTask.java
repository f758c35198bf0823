package io.switchml.client;

import io.switchml.protocol.SlotSchedule;

/** One worker thread's contiguous share [from, to) of an operation, cut into blocks. */
final class LaneTask {
    final Operation<?> operation;
    final int from;
    final int to;
    final SlotSchedule schedule;
    /** High byte of every tsi of this task: the operation's sequence number, to tell stale results. */
    final int tsiPrefix;

    LaneTask(Operation<?> operation, int from, int to, int elementsPerPacket, int window) {
        this.operation = operation;
        this.from = from;
        this.to = to;
        int blocks = (to - from + elementsPerPacket - 1) / elementsPerPacket;
        this.schedule = new SlotSchedule(blocks, window, operation.quantized());
        this.tsiPrefix = (int) (operation.sequence & 0xFF) << 24;
    }
}
