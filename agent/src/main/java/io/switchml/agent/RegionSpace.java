package io.switchml.agent;

import java.util.ArrayDeque;

/**
 * The free space of a rank's region of the shared memory, for the tensors it has in flight. The agent completes a
 * rank's requests in the order they were sent, so space is handed out and given back first-in first-out, as in a ring:
 * a tensor goes where the last one ended, or at the start when it does not fit before the end. When nothing is in
 * flight the next tensor starts at the beginning again, so a rank that waits for each step's all-reduces reuses the
 * same pages (fresh pages are slow to touch).
 */
final class RegionSpace {
    /** Tensors start on cache lines: two ranks' adds never share one. */
    static final int ALIGNMENT = 64;

    private final long capacity;
    private final ArrayDeque<long[]> taken = new ArrayDeque<>();
    private long next;

    RegionSpace(long capacity) {
        this.capacity = capacity;
    }

    /** The most bytes one tensor may take: half the region, so that the next can be written while it is in flight. */
    long largest() {
        return capacity / 2 / ALIGNMENT * ALIGNMENT;
    }

    /** The offset of {@code bytes} free bytes, now taken; -1 when they do not fit until earlier tensors are given back. */
    long take(long bytes) {
        if (bytes > largest()) {
            throw new IllegalArgumentException(bytes + " bytes exceed the " + largest() + " one tensor may take in the region");
        }
        long size = (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
        if (taken.isEmpty()) {
            next = 0;
        }
        long oldest = taken.isEmpty() ? capacity : taken.peekFirst()[0];
        long at;
        if (taken.isEmpty() || next > oldest) {
            // Free: from next to the end, then from the start to the oldest tensor.
            at = capacity - next >= size ? next : oldest >= size ? 0 : -1;
        } else {
            // Wrapped: free from next to the oldest tensor (none when they meet).
            at = oldest - next >= size ? next : -1;
        }
        if (at >= 0) {
            taken.addLast(new long[]{at, size});
            next = at + size;
        }
        return at;
    }

    /** Gives back the oldest tensor's space. */
    void giveBack() {
        taken.removeFirst();
    }
}
