package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.PayloadCodec;
import io.switchml.protocol.SixteenBitLanes;

import java.nio.FloatBuffer;
import java.util.concurrent.Executor;

/**
 * A float32 all-reduce: values travel as block floating point, 32 bits each, or two to an element in
 * 16-bit lanes ({@link SixteenBitLanes}), whose descriptor differs so that workers that disagree fail.
 */
final class FloatOperation extends Operation<FloatBuffer> {
    private final boolean sixteenBitLanes;

    FloatOperation(long sequence, ReduceOp op, FloatBuffer in, FloatBuffer out, int workers, int lanes,
                   Executor completions, String description, boolean sixteenBitLanes) {
        super(sequence, op, sixteenBitLanes ? "float32/16" : "float32", in, out, workers, lanes, completions, description);
        this.sixteenBitLanes = sixteenBitLanes;
    }

    @Override
    boolean oneRoundCapable() {
        return !sixteenBitLanes; // the one-round mode sends raw float32 values, which the switch quantizes to 32 bits
    }

    @Override
    int valuesPerPacket(int elements) {
        return sixteenBitLanes ? 2 * elements : elements;
    }

    @Override
    int elementsFor(int values) {
        return sixteenBitLanes ? SixteenBitLanes.elementsFor(values) : values;
    }

    private double scale(int eMax) {
        return sixteenBitLanes ? SixteenBitLanes.scale(eMax, workers) : BlockQuantizer.scale(eMax, workers);
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
        if (sixteenBitLanes) {
            codec.quantizePairs(in, inBase + from, inBase + to, scale(eMax), packet);
        } else {
            codec.quantize(in, inBase + from, inBase + to, scale(eMax), packet, to - from);
        }
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
        double divisor = scale(eMax) * (op == ReduceOp.MEAN ? workers : 1);
        if (sixteenBitLanes) {
            codec.dequantizePairs(result, to - from, divisor, out, outBase + from);
        } else {
            codec.dequantize(result, to - from, divisor, out, outBase + from);
        }
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
