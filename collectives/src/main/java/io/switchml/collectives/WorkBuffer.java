package io.switchml.collectives;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A direct little-endian buffer that grows to the largest tensor seen and is then reused, so
 * all-reduces of a steady size allocate nothing in proportion to the tensor, and the socket reads
 * and writes straight from it (no hidden copy through a temporary direct buffer).
 */
final class WorkBuffer {
    private ByteBuffer buffer = ByteBuffer.allocateDirect(0).order(ByteOrder.LITTLE_ENDIAN);

    /** A buffer of at least {@code bytes} bytes; its contents are undefined after it grew. */
    ByteBuffer atLeast(int bytes) {
        if (buffer.capacity() < bytes) {
            buffer = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
        }
        return buffer;
    }

    /** The current buffer (the one {@link #atLeast} last returned). */
    ByteBuffer current() {
        return buffer;
    }
}
