package io.switchml.client;

import io.switchml.protocol.SlotSchedule;

/** One worker thread's contiguous share [from, to) of an operation, cut into blocks. */
final class LaneTask {
    final Operation<?> operation;
    final int from;
    final int to;
    final SlotSchedule schedule;
    /** The share goes in one round trip, raw, and the switch quantizes it (docs/ARCHITECTURE.md section 8). */
    final boolean oneRound;

    /**
     * @param oneRoundElements the largest share the job sends in one round (float32 only); 0: none
     */
    LaneTask(Operation<?> operation, int from, int to, int elementsPerPacket, int window, int oneRoundElements) {
        this.operation = operation;
        this.from = from;
        this.to = to;
        int blocks = (to - from + elementsPerPacket - 1) / elementsPerPacket;
        // Every worker decides alike: the sizes and the job's granted limit are the same everywhere.
        this.oneRound = operation.quantized() && blocks > 0 && blocks <= window && to - from <= oneRoundElements;
        // Otherwise a bootstrap round: it carries the block exponents (float32) and, for every type,
        // the operation's descriptor (see OperationDescriptor). One-round packets carry its tag instead.
        this.schedule = new SlotSchedule(blocks, window, !oneRound);
    }
}
