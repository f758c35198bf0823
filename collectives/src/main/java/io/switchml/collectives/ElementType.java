package io.switchml.collectives;

import io.switchml.api.ReduceOp;

import java.nio.ByteBuffer;

/**
 * The element types the baselines reduce, and their arithmetic on the little-endian bytes the work
 * buffers and the wire hold. Both algorithms add and divide only through these methods, so the
 * reference functions can state exactly what they compute.
 */
enum ElementType {
    /** IEEE float32; additions round to nearest even, MEAN is one float division by n. */
    FLOAT32("float32") {
        @Override
        void accumulate(ByteBuffer sum, int sumByte, ByteBuffer addend, int addendByte, int count) {
            int end = sumByte + count * BYTES;
            for (int s = sumByte, a = addendByte; s < end; s += BYTES, a += BYTES) {
                sum.putFloat(s, sum.getFloat(s) + addend.getFloat(a));
            }
        }

        @Override
        void divide(ByteBuffer values, int fromByte, int count, int divisor) {
            float d = divisor; // exact: the worker count is far below 2^24
            int end = fromByte + count * BYTES;
            for (int p = fromByte; p < end; p += BYTES) {
                values.putFloat(p, values.getFloat(p) / d);
            }
        }
    },
    /** Two's-complement int32; sums wrap as Java's int does, MEAN is Java's integer division by n. */
    INT32("int32") {
        @Override
        void accumulate(ByteBuffer sum, int sumByte, ByteBuffer addend, int addendByte, int count) {
            int end = sumByte + count * BYTES;
            for (int s = sumByte, a = addendByte; s < end; s += BYTES, a += BYTES) {
                sum.putInt(s, sum.getInt(s) + addend.getInt(a));
            }
        }

        @Override
        void divide(ByteBuffer values, int fromByte, int count, int divisor) {
            int end = fromByte + count * BYTES;
            for (int p = fromByte; p < end; p += BYTES) {
                values.putInt(p, values.getInt(p) / divisor);
            }
        }
    };

    /** Both types are four bytes wide. */
    static final int BYTES = 4;

    private final String label;

    ElementType(String label) {
        this.label = label;
    }

    /** {@code sum[i] = sum[i] + addend[i]} for {@code count} elements, in that operand order. */
    abstract void accumulate(ByteBuffer sum, int sumByte, ByteBuffer addend, int addendByte, int count);

    /** {@code values[i] = values[i] / divisor} for {@code count} elements. */
    abstract void divide(ByteBuffer values, int fromByte, int count, int divisor);

    /** Turns a finished sum into the operation's result: unchanged for SUM, divided by n for MEAN. */
    void finish(ReduceOp op, ByteBuffer values, int fromByte, int count, int workers) {
        if (op == ReduceOp.MEAN) {
            divide(values, fromByte, count, workers);
        }
    }

    @Override
    public String toString() {
        return label;
    }
}
