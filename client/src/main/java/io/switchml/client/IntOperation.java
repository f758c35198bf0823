package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadCodec;

import java.nio.IntBuffer;
import java.util.concurrent.Executor;

/** An int32 all-reduce: values travel as they are; sums wrap around like Java int addition. */
final class IntOperation extends Operation<IntBuffer> {
    IntOperation(long sequence, ReduceOp op, IntBuffer in, IntBuffer out, int workers, int lanes,
                 Executor completions, String description) {
        super(sequence, op, "int32", in, out, workers, lanes, completions, description);
    }

    @Override
    boolean quantized() {
        return false;
    }

    @Override
    int maxMagnitudeBits(int from, int to, PayloadCodec codec) {
        throw new IllegalStateException("int32 blocks carry no exponent");
    }

    @Override
    void encode(int from, int to, int eMax, AggregationPacket packet, PayloadCodec codec) {
        codec.encode(in, inBase + from, inBase + to, packet, to - from);
    }

    @Override
    void encodeRaw(int from, int to, AggregationPacket packet, PayloadCodec codec) {
        encode(from, to, 0, packet, codec);
    }

    @Override
    void decode(AggregationPacket result, int from, int to, int eMax, boolean unrepresentableBlock,
                PayloadCodec codec) {
        codec.decode(result, to - from, op == ReduceOp.MEAN ? workers : 1, out, outBase + from);
    }

    @Override
    void writeZeros(int from, int to, PayloadCodec codec) {
        for (int i = from; i < to; i++) { // int32 blocks are never skipped (LaneTask); here for completeness
            out.put(outBase + i, 0);
        }
    }

    @Override
    String firstUnrepresentable(int from, int to) {
        return null;
    }
}
