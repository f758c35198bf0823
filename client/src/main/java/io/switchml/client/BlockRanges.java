package io.switchml.client;

/**
 * Blocks as the switch path cuts a tensor: block b holds elements [b k, min(length, (b + 1) k)),
 * one packet's worth; every worker thread's share starts at a block boundary.
 */
final class BlockRanges {
    private BlockRanges() {
    }

    static int count(int length, int k) {
        return (length + k - 1) / k;
    }

    static int end(int block, int k, int length) {
        return (int) Math.min(length, (long) (block + 1) * k);
    }

    /** Elements in the given blocks together. */
    static int elements(int[] blocks, int k, int length) {
        long total = 0;
        for (int b : blocks) {
            total += end(b, k, length) - (long) b * k;
        }
        return Math.toIntExact(total);
    }
}
