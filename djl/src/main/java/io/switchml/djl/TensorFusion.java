package io.switchml.djl;

import io.switchml.api.TensorLayout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * Tensor fusion, as Horovod does it: many small tensors packed into a few large buffers so each
 * all-reduce moves enough data to be efficient. The layout is cut as {@link TensorLayout#buckets}
 * cuts it. Each bucket owns one
 * direct buffer in native byte order, allocated once, with a view per tensor made once too: packing
 * and unpacking a step allocate nothing proportional to the model.
 */
public final class TensorFusion {
    /** Default bucket size: large enough that per-operation costs vanish, small enough to pipeline buckets. */
    public static final long DEFAULT_BUCKET_BYTES = 8L << 20;

    /** A run of consecutive layout entries and the buffer they are packed into. */
    public static final class Bucket {
        private final List<GradientLayout.Entry> entries;
        private final ByteBuffer bytes;
        private final ByteBuffer[] views;
        private final FloatBuffer floats;
        private final IntBuffer ints;

        private Bucket(List<GradientLayout.Entry> entries) {
            this.entries = List.copyOf(entries);
            long first = entries.get(0).offset();
            GradientLayout.Entry last = entries.get(entries.size() - 1);
            int size = Math.toIntExact((last.offset() + last.elements() - first) * Float.BYTES);
            this.bytes = ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
            this.floats = bytes.asFloatBuffer();
            this.ints = bytes.asIntBuffer();
            this.views = new ByteBuffer[entries.size()];
            for (int i = 0; i < views.length; i++) {
                GradientLayout.Entry e = entries.get(i);
                views[i] = bytes.slice(Math.toIntExact((e.offset() - first) * Float.BYTES), Math.toIntExact(e.bytes()))
                        .order(ByteOrder.nativeOrder());
            }
        }

        public List<GradientLayout.Entry> entries() {
            return entries;
        }

        /**
         * The packed values as floats, for a float all-reduce: position 0, limit the bucket's elements. The
         * same view every time (all-reduces leave positions alone).
         */
        public FloatBuffer floats() {
            return floats;
        }

        /** The packed values' raw bits as ints, for an exact copy through an integer all-reduce; the same view every time. */
        public IntBuffer ints() {
            return ints;
        }

        public int elements() {
            return bytes.capacity() / Float.BYTES;
        }

        /**
         * Hands each tensor's view of the bucket (position 0, limit its size, native byte order) to
         * {@code action}: to pack, it writes the tensor's float32 values there (see {@link #copy}); to
         * unpack, it reads them.
         */
        public void forEachTensor(BiConsumer<GradientLayout.Entry, ByteBuffer> action) {
            for (int i = 0; i < views.length; i++) {
                action.accept(entries.get(i), views[i].clear());
            }
        }
    }

    private final List<Bucket> buckets;

    public TensorFusion(GradientLayout layout, long bucketBytes) {
        List<Bucket> cut = new ArrayList<>();
        for (TensorLayout.Bucket b : layout.tensors().buckets(bucketBytes)) {
            cut.add(new Bucket(layout.entries().subList(b.from(), b.to())));
        }
        this.buckets = List.copyOf(cut);
    }

    public List<Bucket> buckets() {
        return buckets;
    }

    /** Copies a tensor's bytes (position to limit, left alone) into its view, checking the size against the layout. */
    public static void copy(GradientLayout.Entry entry, ByteBuffer from, ByteBuffer view) {
        if (from.remaining() != entry.bytes()) {
            throw new IllegalStateException("tensor " + entry.name() + " has " + from.remaining() + " bytes, the layout "
                    + entry.bytes() + " (" + entry.shape() + "): did the model change after synchronization started?");
        }
        view.put(0, from, from.position(), from.remaining());
    }
}
