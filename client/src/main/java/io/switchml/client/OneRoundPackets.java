package io.switchml.client;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.OneRound;
import io.switchml.protocol.PayloadCodec;

/**
 * A worker thread's one-round packets (docs/ARCHITECTURE.md section 8): a block of raw float32
 * values (or int32 values) with the operation's tag goes out; the result comes back as the second
 * round of the two-round protocol would bring it (int32 sums, at the block's exponent for float32),
 * or marked mismatched.
 */
final class OneRoundPackets {
    private OneRoundPackets() {
    }

    /**
     * Writes block [from, to) of {@code op} into {@code tx}, whose header is written: flag, tag and
     * raw values. Returns the payload elements.
     */
    static int encode(Operation<?> op, int from, int to, AggregationPacket tx, PayloadCodec codec) {
        tx.oneRound(true).oneRoundIntegers(!op.quantized());
        OneRound.writeTag(tx, op.descriptor.tag());
        op.encodeRaw(from, to, tx, codec);
        return to - from;
    }

    /** Whether the switch found that the workers' contributions to this round disagree. */
    static boolean mismatched(AggregationPacket result) {
        return result.exponent1() == OneRound.FLAG_MISMATCH;
    }

    /** Writes the result of block [from, to); float32 sums are at the exponent in e0. */
    static void decode(Operation<?> op, AggregationPacket result, int from, int to, PayloadCodec codec) {
        boolean unrepresentable = result.exponent1() != BlockQuantizer.FLAG_NONE;
        op.decode(result, from, to, result.exponent0(), unrepresentable, codec);
        if (unrepresentable) {
            op.noteUnrepresentable(from, to);
        }
    }
}
