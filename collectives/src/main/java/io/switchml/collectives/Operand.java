package io.switchml.collectives;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;

/**
 * The caller's input and output of one all-reduce, captured when it is submitted (so later changes
 * to the buffers' positions do not matter), and the bulk copies between them and the work buffer.
 * The input and the output may be the same buffer: everything is read before anything is written.
 */
abstract class Operand {
    private final ElementType type;
    private final int length;
    private final Object owner;
    private final int ownerOffset;

    private Operand(ElementType type, int length, Object owner, int ownerOffset) {
        if (length > Integer.MAX_VALUE / ElementType.BYTES) {
            throw new IllegalArgumentException("a tensor of " + length + " elements is over the 2 GiB a single all-reduce takes");
        }
        this.type = type;
        this.length = length;
        this.owner = owner;
        this.ownerOffset = ownerOffset;
    }

    static Operand of(FloatBuffer in, FloatBuffer out) {
        checkOutput(in.remaining(), out.remaining(), out.isReadOnly());
        return new Floats(in.duplicate(), out.duplicate(), in.hasArray() ? in.array() : in,
                in.hasArray() ? in.arrayOffset() + in.position() : in.position());
    }

    static Operand of(IntBuffer in, IntBuffer out) {
        checkOutput(in.remaining(), out.remaining(), out.isReadOnly());
        return new Ints(in.duplicate(), out.duplicate(), in.hasArray() ? in.array() : in,
                in.hasArray() ? in.arrayOffset() + in.position() : in.position());
    }

    /**
     * What holds the input: the array behind a heap buffer, else the buffer object the caller passed. With
     * {@link #ownerOffset()} and the length it names "the same tensor" from one all-reduce to the next, for the
     * per-tensor state of error feedback ({@link TensorStates}).
     */
    Object owner() {
        return owner;
    }

    /** Where the input starts in its {@link #owner()}: the array index, or the buffer's position. */
    int ownerOffset() {
        return ownerOffset;
    }

    /** float32 only: copies the input into {@code dst[0..length)}. */
    void readFloats(float[] dst) {
        throw new UnsupportedOperationException("not a float32 operand");
    }

    /** float32 only: copies {@code src[0..length)} to the output, at its position. */
    void writeFloats(float[] src) {
        throw new UnsupportedOperationException("not a float32 operand");
    }

    ElementType type() {
        return type;
    }

    /** Elements in the input, from its position to its limit. */
    int length() {
        return length;
    }

    int bytes() {
        return length * ElementType.BYTES;
    }

    /** Copies the input into bytes [0, bytes()) of the little-endian work buffer. */
    abstract void copyIn(ByteBuffer work);

    /** Copies bytes [0, bytes()) of the work buffer to the output, at its position. */
    abstract void copyOut(ByteBuffer work);

    static ByteBuffer littleEndian(ByteBuffer work, int bytes) {
        // duplicate() forgets the byte order, so set it again.
        return work.duplicate().order(ByteOrder.LITTLE_ENDIAN).position(0).limit(bytes);
    }

    private static void checkOutput(int inputLength, int outputCapacity, boolean readOnly) {
        if (readOnly) {
            throw new IllegalArgumentException("the output buffer is read-only");
        }
        if (outputCapacity < inputLength) {
            throw new IllegalArgumentException("output holds " + outputCapacity + " elements but the input has " + inputLength);
        }
    }

    private static final class Floats extends Operand {
        private final FloatBuffer in;
        private final FloatBuffer out;

        Floats(FloatBuffer in, FloatBuffer out, Object owner, int ownerOffset) {
            super(ElementType.FLOAT32, in.remaining(), owner, ownerOffset);
            this.in = in;
            this.out = out;
        }

        @Override
        void readFloats(float[] dst) {
            in.duplicate().get(dst, 0, length());
        }

        @Override
        void writeFloats(float[] src) {
            out.duplicate().put(src, 0, length());
        }

        @Override
        void copyIn(ByteBuffer work) {
            littleEndian(work, bytes()).asFloatBuffer().put(in.duplicate());
        }

        @Override
        void copyOut(ByteBuffer work) {
            out.duplicate().put(littleEndian(work, bytes()).asFloatBuffer());
        }
    }

    private static final class Ints extends Operand {
        private final IntBuffer in;
        private final IntBuffer out;

        Ints(IntBuffer in, IntBuffer out, Object owner, int ownerOffset) {
            super(ElementType.INT32, in.remaining(), owner, ownerOffset);
            this.in = in;
            this.out = out;
        }

        @Override
        void copyIn(ByteBuffer work) {
            littleEndian(work, bytes()).asIntBuffer().put(in.duplicate());
        }

        @Override
        void copyOut(ByteBuffer work) {
            out.duplicate().put(littleEndian(work, bytes()).asIntBuffer());
        }
    }
}
