package io.switchml.collectives;

/**
 * A tensor of {@code length} elements cut into {@code parts} contiguous parts whose sizes differ by
 * at most one: the first {@code length % parts} parts hold one element more. The ring's chunks
 * (one per rank) and the parameter server's shards (one per server) are both cut this way, so a
 * reference function can tell which part an element fell in.
 */
final class Partition {
    private final int length;
    private final int parts;
    private final int base;
    private final int extra;

    private Partition(int length, int parts) {
        this.length = length;
        this.parts = parts;
        this.base = length / parts;
        this.extra = length % parts;
    }

    static Partition of(int length, int parts) {
        if (length < 0 || parts < 1) {
            throw new IllegalArgumentException("cannot cut " + length + " elements into " + parts + " parts");
        }
        return new Partition(length, parts);
    }

    int length() {
        return length;
    }

    int parts() {
        return parts;
    }

    /** Index of the part's first element. */
    int start(int part) {
        return part * base + Math.min(part, extra);
    }

    /** Number of elements in the part (0 when the tensor has fewer elements than there are parts). */
    int size(int part) {
        return base + (part < extra ? 1 : 0);
    }

    /** The part holding element {@code index}. */
    int partOf(int index) {
        if (index < 0 || index >= length) {
            throw new IndexOutOfBoundsException("element " + index + " of a tensor of " + length);
        }
        int longParts = extra * (base + 1);
        return index < longParts ? index / (base + 1) : extra + (index - longParts) / base;
    }
}
