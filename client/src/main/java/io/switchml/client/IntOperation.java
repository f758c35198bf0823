package io.switchml.client;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.BlockQuantizer;

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
    int maxMagnitudeBits(int from, int to) {
        throw new IllegalStateException("int32 blocks carry no exponent");
    }

    @Override
    void encode(int from, int to, int eMax, AggregationPacket packet, int k) {
        int n = to - from;
        for (int i = 0; i < n; i++) {
            packet.element(i, in.get(inBase + from + i));
        }
        BlockQuantizer.zeroFill(packet, n, k);
    }

    @Override
    void decode(AggregationPacket result, int from, int to, int eMax, boolean unrepresentableBlock) {
        boolean mean = op == ReduceOp.MEAN;
        for (int i = from; i < to; i++) {
            int sum = result.element(i - from);
            out.put(outBase + i, mean ? sum / workers : sum);
        }
    }

    @Override
    String firstUnrepresentable(int from, int to) {
        return null;
    }
}
