package io.switchml.api;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A model's tensors (names and shapes of 4-byte elements) in one canonical order, the same on every
 * worker, whatever the framework: what data-parallel training fuses into buckets and checks across
 * ranks before it sums anything. The framework integrations (DJL, TensorFlow) build one from their
 * parameters and keep their own handles beside it, by index.
 */
public final class TensorLayout {
    /**
     * One tensor's place in the flattened layout.
     *
     * @param offset elements before it in the layout
     */
    public record Entry(int index, String name, String shape, int elements, long offset) {
        public long bytes() {
            return (long) elements * Float.BYTES;
        }
    }

    /** Consecutive entries {@code from} (inclusive) to {@code to} (exclusive), fused into one all-reduce. */
    public record Bucket(int from, int to, long elements) {
    }

    private final List<Entry> entries;
    private final long totalElements;
    private final long fingerprint;

    private TensorLayout(List<Entry> entries) {
        this.entries = List.copyOf(entries);
        Entry last = entries.isEmpty() ? null : entries.get(entries.size() - 1);
        this.totalElements = last == null ? 0 : last.offset() + last.elements();
        long h = 0xcbf29ce484222325L; // 64-bit FNV-1a
        for (Entry e : entries) {
            for (byte b : (e.name() + e.shape() + ";").getBytes(StandardCharsets.UTF_8)) {
                h = (h ^ (b & 0xff)) * 0x100000001b3L;
            }
        }
        this.fingerprint = h;
    }

    /** Collects entries in order; names must be unique, since they are what ranks compare. */
    public static final class Builder {
        private final List<Entry> entries = new ArrayList<>();
        private final Set<String> names = new HashSet<>();
        private long offset;

        /** Adds a tensor of {@code dimensions}, shown as {@code (d0, d1, ...)}. */
        public Builder add(String name, long... dimensions) {
            long elements = 1;
            for (long d : dimensions) {
                if (d < 0) {
                    throw new IllegalArgumentException("tensor " + name + " has an unknown or negative dimension "
                            + Arrays.toString(dimensions) + ": a layout needs static shapes");
                }
                elements *= d;
            }
            StringBuilder shape = new StringBuilder("(");
            for (int i = 0; i < dimensions.length; i++) {
                shape.append(i == 0 ? "" : ", ").append(dimensions[i]);
            }
            return add(name, shape.append(')').toString(), elements);
        }

        /** Adds a tensor of {@code elements} whose shape the framework has already put in words. */
        public Builder add(String name, String shape, long elements) {
            if (!names.add(name)) {
                throw new IllegalArgumentException("two tensors are named '" + name + "': a canonical order needs unique names");
            }
            entries.add(new Entry(entries.size(), name, shape, Math.toIntExact(elements), offset));
            offset += elements;
            return this;
        }

        public TensorLayout build() {
            return new TensorLayout(entries);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public List<Entry> entries() {
        return entries;
    }

    public long totalElements() {
        return totalElements;
    }

    public long totalBytes() {
        return totalElements * Float.BYTES;
    }

    /** A 64-bit FNV-1a hash of the names and shapes, in order. */
    public long fingerprint() {
        return fingerprint;
    }

    /** One line for error messages: how many tensors, elements, and the first and last names. */
    public String describe() {
        if (entries.isEmpty()) {
            return "no parameters";
        }
        Entry first = entries.get(0);
        Entry last = entries.get(entries.size() - 1);
        return entries.size() + " parameters, " + totalElements + " elements (" + first.name() + " " + first.shape() + " ... "
                + last.name() + " " + last.shape() + ")";
    }

    /**
     * Tensor fusion, as Horovod does it: the layout cut, in order, into buckets of at most
     * {@code bucketBytes} (a tensor larger than that gets a bucket of its own), so that each
     * all-reduce moves enough data to be efficient and later buckets pipeline behind earlier ones.
     */
    public List<Bucket> buckets(long bucketBytes) {
        if (bucketBytes < Float.BYTES) {
            throw new IllegalArgumentException("fusion bucket size " + bucketBytes + " B is below one float");
        }
        List<Bucket> cut = new ArrayList<>();
        int from = 0;
        long bytes = 0;
        for (Entry e : entries) {
            if (e.index() > from && bytes + e.bytes() > bucketBytes) {
                cut.add(new Bucket(from, e.index(), bytes / Float.BYTES));
                from = e.index();
                bytes = 0;
            }
            bytes += e.bytes();
        }
        if (from < entries.size()) {
            cut.add(new Bucket(from, entries.size(), bytes / Float.BYTES));
        }
        return List.copyOf(cut);
    }

    /**
     * Checks, before any tensor is summed, that every worker has this layout: rank 0 broadcasts its
     * fingerprint and description, and a worker whose own differs fails with both in the message
     * rather than silently summing unrelated tensors. Every rank calls it at the same point.
     *
     * @param what the tensors in words, for the message ("trainable parameters")
     */
    public void requireSameOnAllRanks(AllReduce allReduce, String what) {
        byte[] description = describe().getBytes(StandardCharsets.UTF_8);
        byte[] mine = ByteBuffer.allocate(Long.BYTES + description.length).putLong(fingerprint).put(description).array();
        byte[] root = allReduce.broadcast(mine, 0);
        if (ByteBuffer.wrap(root).getLong() != fingerprint) {
            String rootDescription = new String(root, Long.BYTES, root.length - Long.BYTES, StandardCharsets.UTF_8);
            throw new IllegalStateException("rank " + allReduce.rank() + "'s " + what + " differ from rank 0's: here "
                    + describe() + ", at rank 0 " + rootDescription + "; every worker must build the same model");
        }
    }
}
