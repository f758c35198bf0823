package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.protocol.AggregationPacket;

/**
 * What an all-reduce is (its sequence number, length, element type and operation), checked through
 * the switch itself: the first window of every worker thread carries no values yet, so its payload
 * carries two small hashes h of the description and their squares. The switch sums them; a worker
 * whose own h gives n h and n h^2 knows every worker sent the same h, because
 * sum (h_i - h)^2 = sum h_i^2 - 2 h sum h_i + n h^2 is then 0. Workers that disagree all find out
 * from the same result, before any value is written, and fail with a clear error instead of a
 * wrong sum.
 */
final class OperationDescriptor {
    /** Payload elements the description takes: packets that carry nothing else are this long. */
    static final int ELEMENTS = 4;
    /** Hashes of 11 bits: n h^2 stays below 2^30 for n up to 256, so the int sums are exact. */
    private static final int HASH_BITS = 11;

    private final int h1;
    private final int h2;
    private final String text;

    private OperationDescriptor(int h1, int h2, String text) {
        this.h1 = h1;
        this.h2 = h2;
        this.text = text;
    }

    static OperationDescriptor of(long sequence, int length, String type, ReduceOp op) {
        long h = mix(sequence * 0x9E3779B97F4A7C15L ^ mix(length * 0xC2B2AE3D27D4EB4FL ^ type.hashCode()) ^ op.ordinal());
        int mask = (1 << HASH_BITS) - 1;
        return new OperationDescriptor((int) h & mask, (int) (h >>> 32) & mask,
                "#" + sequence + ": " + op + " of " + length + " " + type);
    }

    /** Writes the four terms into payload elements 0..3 (the rest of the payload is left alone). */
    void write(AggregationPacket packet) {
        packet.element(0, h1).element(1, h1 * h1).element(2, h2).element(3, h2 * h2);
    }

    /**
     * 16 bits of the description, which one-round packets carry in e0 and e1 and the switch
     * compares (docs/ARCHITECTURE.md section 8): all of h1 and the low 5 bits of h2.
     */
    int tag() {
        return h1 | (h2 & 0x1F) << HASH_BITS;
    }

    /** Whether the switch's sums show that every one of {@code workers} sent this description. */
    boolean matches(AggregationPacket result, int workers) {
        return result.element(0) == workers * h1 && result.element(1) == workers * h1 * h1
                && result.element(2) == workers * h2 && result.element(3) == workers * h2 * h2;
    }

    @Override
    public String toString() {
        return text;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
