package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.PayloadCodec;

import java.nio.FloatBuffer;
import java.util.concurrent.Executor;

/** A float32 all-reduce: values travel as block floating point. */
final class FloatOperation extends Operation<FloatBuffer> {
    FloatOperation(long sequence, ReduceOp op, FloatBuffer in, FloatBuffer out, int workers, int lanes,
                   Executor completions, String description) {
        super(sequence, op, "float32", in, out, workers, lanes, completions, description);
    }

    @Override
    boolean quantized() {
        return true;
    }

    @Override
    int maxMagnitudeBits(int from, int to, PayloadCodec codec) {
        return codec.maxMagnitudeBits(in, inBase + from, inBase + to);
    }

    @Override
    void encode(int from, int to, int eMax, AggregationPacket packet, PayloadCodec codec) {
        codec.quantize(in, inBase + from, inBase + to, BlockQuantizer.scale(eMax, workers), packet, to - from);
    }

    @Override
    void encodeRaw(int from, int to, AggregationPacket packet, PayloadCodec codec) {
        codec.copyRaw(in, inBase + from, inBase + to, packet);
    }

    @Override
    void decode(AggregationPacket result, int from, int to, int eMax, boolean unrepresentableBlock,
                PayloadCodec codec) {
        if (unrepresentableBlock) {
            for (int i = from; i < to; i++) {
                out.put(outBase + i, Float.NaN);
            }
            return;
        }
        double divisor = BlockQuantizer.scale(eMax, workers) * (op == ReduceOp.MEAN ? workers : 1);
        codec.dequantize(result, to - from, divisor, out, outBase + from);
    }

    @Override
    void writeZeros(int from, int to, PayloadCodec codec) {
        codec.writeZeros(out, outBase + from, to - from);
    }

    @Override
    String firstUnrepresentable(int from, int to) {
        for (int i = from; i < to; i++) {
            float x = in.get(inBase + i);
            if (!BlockQuantizer.representable(Float.floatToRawIntBits(x) & 0x7FFFFFFF)) {
                return "element " + i + " = " + x;
            }
        }
        return null;
    }
}
