package io.switchml.client;

import io.switchml.protocol.SlotSchedule;

/** One worker thread's contiguous share [from, to) of an operation, cut into blocks. */
final class LaneTask {
    final Operation<?> operation;
    final int from;
    final int to;
    final SlotSchedule schedule;
    /**
     * No bootstrap round (docs/ARCHITECTURE.md section 8): float32 goes raw and the switch quantizes
     * it; int32 goes as it is; either way the packets carry the operation's tag.
     */
    final boolean oneRound;
    /** Blocks that are zero at every worker go as one-element packets (docs/ARCHITECTURE.md section 14). */
    final boolean skipZeroBlocks;
    /** Values per block: a packet's elements, or twice as many in 16-bit lanes. */
    final int valuesPerBlock;

    /**
     * @param oneRoundElements the largest float32 share the job sends in one round; 0: the switch
     *                         has no one-round mode (and int32 then needs its bootstrap too)
     * @param skipZeroBlocks   the job agreed to skip float32 blocks that are zero at every worker
     */
    LaneTask(Operation<?> operation, int from, int to, int elementsPerPacket, int window, int oneRoundElements,
             boolean skipZeroBlocks) {
        this.operation = operation;
        this.from = from;
        this.to = to;
        this.valuesPerBlock = operation.valuesPerPacket(elementsPerPacket);
        int blocks = (to - from + valuesPerBlock - 1) / valuesPerBlock;
        // Every worker decides alike: the sizes and the job's granted limit are the same everywhere.
        // int32 needs no staging, so any size goes without a bootstrap once the switch has the mode.
        this.oneRound = blocks > 0 && oneRoundElements > 0 && operation.oneRoundCapable()
                && (!operation.quantized() || blocks <= window && to - from <= oneRoundElements);
        // Otherwise a bootstrap round: it carries the block exponents (float32) and, for every type,
        // the operation's descriptor (see OperationDescriptor). One-round packets carry its tag instead.
        this.schedule = new SlotSchedule(blocks, window, !oneRound);
        this.skipZeroBlocks = skipZeroBlocks && operation.quantized() && !oneRound;
    }
}
