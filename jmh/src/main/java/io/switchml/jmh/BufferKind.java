package io.switchml.jmh;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * Heap or direct memory. Tensors come as a wrapped float[] or a direct buffer (as from native
 * code); packets live in direct (Netty) buffers on the worker and the switch, in heap buffers in
 * tests and tools.
 */
public enum BufferKind {
    HEAP,
    DIRECT;

    /** A float tensor of {@code elements}; a direct one in native order, as a framework's off-heap tensor is. */
    public FloatBuffer floats(int elements) {
        if (this == HEAP) {
            return FloatBuffer.allocate(elements);
        }
        return ByteBuffer.allocateDirect(elements * Float.BYTES).order(ByteOrder.nativeOrder()).asFloatBuffer();
    }

    /** A big-endian byte buffer for packets. */
    public ByteBuffer packet(int bytes) {
        ByteBuffer buffer = this == HEAP ? ByteBuffer.allocate(bytes) : ByteBuffer.allocateDirect(bytes);
        return buffer.order(ByteOrder.BIG_ENDIAN);
    }
}
