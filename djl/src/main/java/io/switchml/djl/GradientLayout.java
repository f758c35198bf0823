package io.switchml.djl;

import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;
import io.switchml.api.TensorLayout;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The parameters of a block in one canonical order, the same on every worker: the block's own
 * order of {@link Block#getParameters()}, whose names come from the block structure (such as
 * {@code 02Linear_weight}). Parameter ids cannot serve: DJL makes them per process ({@code "uid-" +
 * nanoTime}). Workers compare {@link #fingerprint()}s before they aggregate anything, so two
 * different models fail with a clear error instead of summing unrelated tensors.
 */
public final class GradientLayout {
    /**
     * One parameter's place in the flattened layout.
     *
     * @param offset elements before it in the layout
     */
    public record Entry(int index, String name, Parameter parameter, Shape shape, int elements, long offset) {
        public long bytes() {
            return (long) elements * Float.BYTES;
        }
    }

    private final List<Entry> entries;
    private final TensorLayout tensors;

    private GradientLayout(List<Entry> entries, TensorLayout tensors) {
        this.entries = List.copyOf(entries);
        this.tensors = tensors;
    }

    /** The parameters that take gradients (what data-parallel training must sum), initialized. */
    public static GradientLayout trainable(Block block) {
        return of(block, Parameter::requiresGradient);
    }

    /** Every parameter (what the workers must agree on at the start), initialized. */
    public static GradientLayout all(Block block) {
        return of(block, p -> true);
    }

    private static GradientLayout of(Block block, Predicate<Parameter> include) {
        List<Entry> entries = new ArrayList<>();
        TensorLayout.Builder tensors = TensorLayout.builder();
        long offset = 0;
        for (Pair<String, Parameter> p : block.getParameters()) {
            Parameter parameter = p.getValue();
            if (!include.test(parameter)) {
                continue;
            }
            String name = p.getKey();
            if (!parameter.isInitialized()) {
                throw new IllegalStateException("parameter " + name + " is not initialized: call trainer.initialize(shape)"
                        + " before synchronizing");
            }
            DataType type = parameter.getArray().getDataType();
            if (type != DataType.FLOAT32) {
                throw new IllegalArgumentException("parameter " + name + " is " + type + "; only float32 parameters are supported");
            }
            Shape shape = parameter.getArray().getShape();
            entries.add(new Entry(entries.size(), name, parameter, shape, Math.toIntExact(shape.size()), offset));
            tensors.add(name, shape.toString(), shape.size()); // refuses a second parameter of the same name
            offset += shape.size();
        }
        return new GradientLayout(entries, tensors.build());
    }

    public List<Entry> entries() {
        return entries;
    }

    /** The same layout without DJL's types: what the ranks compare and fusion cuts, entry for entry. */
    public TensorLayout tensors() {
        return tensors;
    }

    public long totalElements() {
        return tensors.totalElements();
    }

    public long totalBytes() {
        return tensors.totalBytes();
    }

    /** A 64-bit FNV-1a hash of the names and shapes, in order. */
    public long fingerprint() {
        return tensors.fingerprint();
    }

    /** One line for error messages: how many parameters, elements, and the first and last names. */
    public String describe() {
        return tensors.describe();
    }
}
