package io.switchml.tensorflow;

import io.switchml.api.TensorLayout;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TType;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Tensor fusion inside the graph: TensorFlow itself packs a layout's tensors into one flat tensor per
 * bucket ({@link #packed()}, what a step fetches) and splits a fed flat tensor per bucket
 * ({@link #placeholders()}) back into tensors of the layout's shapes ({@link #unpacked()}). The
 * all-reduce then goes straight from the fetched tensors' memory into the fed ones'
 * ({@link TensorMemory}): the fusion copies are TensorFlow's concat and split, with no copy in Java.
 * The fed tensors are allocated once and reused every step.
 */
final class Fused<T extends TType> implements AutoCloseable {
    private final List<TensorLayout.Bucket> buckets;
    private final List<Operand<T>> packed = new ArrayList<>();
    private final List<Placeholder<T>> placeholders = new ArrayList<>();
    private final List<Operand<T>> unpacked = new ArrayList<>();
    private final List<T> fed = new ArrayList<>();

    /**
     * @param tensors  the layout's tensors, in its order
     * @param shapes   each tensor's shape, from its variable's (a gradient's may not be known before it runs)
     * @param allocate a tensor of the given shape, for the fed buckets
     */
    Fused(Ops tf, TensorLayout layout, List<Operand<T>> tensors, List<Shape> shapes, Class<T> type, long bucketBytes,
          Function<Shape, T> allocate) {
        this.buckets = layout.buckets(bucketBytes);
        Operand<TInt64> flat = tf.constant(new long[] {-1});
        try {
            for (TensorLayout.Bucket bucket : buckets) {
                List<Operand<T>> flattened = new ArrayList<>();
                long[] sizes = new long[bucket.to() - bucket.from()];
                for (int i = bucket.from(); i < bucket.to(); i++) {
                    flattened.add(tf.reshape(tensors.get(i), flat));
                    sizes[i - bucket.from()] = layout.entries().get(i).elements();
                }
                packed.add(flattened.size() == 1 ? flattened.get(0) : tf.concat(flattened, tf.constant(0)));
                Placeholder<T> in = tf.placeholder(type, Placeholder.shape(Shape.of(bucket.elements())));
                placeholders.add(in);
                List<Output<T>> parts = sizes.length == 1 ? List.of(in.output())
                        : tf.splitV(in, tf.constant(sizes), tf.constant(0), (long) sizes.length).output();
                for (int i = bucket.from(); i < bucket.to(); i++) {
                    unpacked.add(tf.reshape(parts.get(i - bucket.from()), tf.constant(shapes.get(i).asArray())));
                }
                fed.add(allocate.apply(Shape.of(bucket.elements())));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    List<TensorLayout.Bucket> buckets() {
        return buckets;
    }

    /** One flat tensor per bucket: the layout's tensors packed in order. */
    List<Operand<T>> packed() {
        return packed;
    }

    List<Placeholder<T>> placeholders() {
        return placeholders;
    }

    /** The layout's tensors as split from the fed buckets, in its order and shapes. */
    List<Operand<T>> unpacked() {
        return unpacked;
    }

    /** The tensors fed to {@link #placeholders()}, one per bucket: where the all-reduce writes. */
    List<T> fed() {
        return fed;
    }

    /** Feeds the {@link #fed()} tensors to a runner. */
    org.tensorflow.Session.Runner feed(org.tensorflow.Session.Runner runner) {
        for (int b = 0; b < placeholders.size(); b++) {
            runner.feed(placeholders.get(b), fed.get(b));
        }
        return runner;
    }

    @Override
    public void close() {
        fed.forEach(Tensor::close);
        fed.clear();
    }
}
