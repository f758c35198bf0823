package io.switchml.tensorflow;

import org.bytedeco.javacpp.Pointer;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.buffer.DataStorageVisitor;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;

/**
 * A TensorFlow tensor's own memory as a direct NIO buffer, so that an all-reduce reads and writes
 * the tensor in place: no copy between TensorFlow and the aggregation. TensorFlow Java maps a
 * tensor's memory for its {@code DataBuffer}s and hands out the address through
 * {@link DataStorageVisitor}; the buffer made here over it is valid only while the tensor is open.
 */
public final class TensorMemory {
    private TensorMemory() {
    }

    /** The float32 tensor's elements, position 0, limit its size, native byte order. */
    public static FloatBuffer floats(TFloat32 tensor) {
        return bytes(tensor).asFloatBuffer();
    }

    /** The int32 tensor's elements, position 0, limit its size, native byte order. */
    public static IntBuffer ints(TInt32 tensor) {
        return bytes(tensor).asIntBuffer();
    }

    /** The tensor's bytes, position 0, native byte order; writable where TensorFlow Java maps the memory writable. */
    public static ByteBuffer bytes(Tensor tensor) {
        ByteBuffer view = tensor.asRawTensor().data().accept(new DataStorageVisitor<ByteBuffer>() {
            @Override
            public ByteBuffer visit(long address, long length, long scale) {
                return new Region(address, length).asByteBuffer(); // length in bytes; scale is the element size
            }

            @Override
            public ByteBuffer visit(ByteBuffer buffer) {
                return buffer.duplicate();
            }

            @Override
            public ByteBuffer fallback() {
                throw new IllegalStateException("TensorFlow Java did not expose the memory of a " + tensor.dataType()
                        + " tensor " + tensor.shape() + " as a native address or a ByteBuffer");
            }
        });
        if (view.capacity() != tensor.numBytes()) {
            throw new IllegalStateException("the memory of a " + tensor.dataType() + " tensor " + tensor.shape() + " spans "
                    + view.capacity() + " bytes, the tensor " + tensor.numBytes());
        }
        return view.clear().order(ByteOrder.nativeOrder());
    }

    /** A native region known by its address (JavaCPP makes the direct buffer; the memory stays TensorFlow's). */
    private static final class Region extends Pointer {
        Region(long address, long bytes) {
            this.address = address;
            this.limit = bytes;
            this.capacity = bytes;
        }

        /** Counted in bytes (JavaCPP's plain Pointer would count its limit in words). */
        @Override
        public int sizeof() {
            return 1;
        }
    }
}
