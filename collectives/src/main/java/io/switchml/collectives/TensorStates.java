package io.switchml.collectives;

import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.HashMap;
import java.util.Map;

/**
 * The state a compressed all-reduce keeps per tensor from one step to the next (the top-k residual and
 * velocity, the step count that seeds QSGD's rounding). The all-reduce interface names no tensors, so a tensor is
 * known by where its input lives: the array behind a heap buffer (identity, not contents) and the
 * offset in it, or the direct buffer object passed in and its position; and its length. Passing the
 * same buffer for the same gradient every step (as {@code GradientSynchronizer} and the bench do)
 * keeps its state; a new buffer starts from a zero residual and step 0. Keys hold their buffers
 * weakly: the state of a buffer nobody uses any more goes with it. Only the instance's queue thread
 * touches it.
 */
final class TensorStates {
    /** One tensor's state. */
    static final class State {
        private final int length;
        /** The top-k residual, allocated at the first use (zeros). */
        private float[] residual;
        /** The top-k velocity of momentum correction, allocated at the first use (zeros). */
        private float[] velocity;
        /** All-reduces of this tensor so far. */
        long steps;

        State(int length) {
            this.length = length;
        }

        float[] residual() {
            if (residual == null) {
                residual = new float[length];
            }
            return residual;
        }

        float[] velocity() {
            if (velocity == null) {
                velocity = new float[length];
            }
            return velocity;
        }
    }

    private final Map<Key, State> states = new HashMap<>();
    private final ReferenceQueue<Object> collected = new ReferenceQueue<>();

    /** The state of the tensor of {@code length} elements at {@code offset} in {@code owner}; new ones start empty. */
    State of(Object owner, int offset, int length) {
        expunge();
        Key probe = new Key(owner, offset, length, null);
        State s = states.get(probe);
        if (s == null) {
            s = new State(length);
            states.put(new Key(owner, offset, length, collected), s);
        }
        return s;
    }

    private void expunge() {
        for (Reference<?> r; (r = collected.poll()) != null; ) {
            states.remove(r);
        }
    }

    /** Identity of the owner, plus offset and length; equal to itself even after the owner is collected. */
    private static final class Key extends WeakReference<Object> {
        private final int hash;
        private final int offset;
        private final int length;

        Key(Object owner, int offset, int length, ReferenceQueue<Object> queue) {
            super(owner, queue);
            this.offset = offset;
            this.length = length;
            this.hash = (System.identityHashCode(owner) * 31 + offset) * 31 + length;
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            if (o == this) {
                return true;
            }
            if (!(o instanceof Key k) || k.hash != hash || k.offset != offset || k.length != length) {
                return false;
            }
            Object mine = get();
            return mine != null && mine == k.get();
        }
    }
}
