package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.OneRound;
import io.switchml.protocol.kernels.PayloadKernels;

import java.util.Arrays;

/**
 * The one-round mode's block (docs/ARCHITECTURE.md section 8): it holds every contribution of a
 * one-round slot as raw float32 bits, and when the last one arrives it does what the workers
 * would have done after an exponent round: the block exponent over all contributions, each
 * contribution quantized with {@link BlockQuantizer} at that exponent, the integers summed into
 * the {@link Processor}'s registers and the exponent and flag into the {@link Exponents}'. The
 * result is then sent, and answered again to retransmissions, as any other.
 *
 * <p>One-round int32 packets need no staging: their values are summed by the processor as they
 * arrive, and this block only checks their tags and lengths.
 *
 * <p>A round's mode is its first contribution's. A contribution that disagrees with it (the other
 * mode, another operation tag or another length) marks the round as mismatched: its result is
 * poisoned ({@link OneRound#FLAG_MISMATCH}) so every worker fails instead of
 * using it. In a two-round round a one-round contribution is otherwise summed like any other.
 *
 * <p>Staging is one copy per slot, not per set: a slot's next round can only open once this one is
 * complete, because every worker waits for a round's result before it sends the slot's next
 * packet (and the round checker drops late duplicates of older rounds). Only the slot's port
 * thread touches it; nothing here allocates.
 */
final class OneRoundStaging {
    /** A round's or packet's mode: the two-round protocol's. */
    static final int TWO_ROUNDS = 0;
    /** One round of raw float32 values, staged and quantized here. */
    static final int ONE_ROUND_FLOAT32 = 1;
    /** One round of int32 values, summed by the processor as they come; only the tags are checked here. */
    static final int ONE_ROUND_INT32 = 2;

    private final int slots;
    private final int workers;
    private final int capacity;
    /** staged[slot][rank * capacity + i]: rank's value i as raw float32 bits. */
    private final int[][] staged;
    /** Per (set * slots + slot): the round's mode; whether its contributions disagree. */
    private final byte[] roundMode;
    private final boolean[] mismatched;
    /** Per slot: the round's first tag and length, and the largest magnitude bits staged so far. */
    private final int[] tag;
    private final int[] length;
    private final int[] maxBits;

    OneRoundStaging(int slots, int workers, int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("one-round capacity " + capacity + " < 1");
        }
        this.slots = slots;
        this.workers = workers;
        this.capacity = capacity;
        this.staged = new int[slots][workers * capacity];
        this.roundMode = new byte[2 * slots];
        this.mismatched = new boolean[2 * slots];
        this.tag = new int[slots];
        this.length = new int[slots];
        this.maxBits = new int[slots];
    }

    /** Values one contribution may carry. */
    int capacity() {
        return capacity;
    }

    /**
     * Takes a new (not retransmitted) contribution of {@code rank} to (set, slot).
     *
     * @param first it opens the round
     * @param mode  the packet's mode: {@link #TWO_ROUNDS}, {@link #ONE_ROUND_FLOAT32} or {@link #ONE_ROUND_INT32}
     * @return the round's mode: for {@link #ONE_ROUND_FLOAT32} the contribution is staged here and
     *         must not reach the exponents and processor; for {@link #ONE_ROUND_INT32} it goes to the
     *         processor only (e0 and e1 carry the tag)
     */
    int contribute(int set, int slot, int rank, boolean first, int mode, AggregationPacket packet, int elements,
                   PayloadKernels kernels) {
        int i = set * slots + slot;
        int packetTag = mode != TWO_ROUNDS ? OneRound.tag(packet) : 0;
        if (first) {
            roundMode[i] = (byte) mode;
            mismatched[i] = false;
            tag[slot] = packetTag;
            length[slot] = elements;
            maxBits[slot] = 0;
        } else if (mode != roundMode[i] || mode != TWO_ROUNDS && (packetTag != tag[slot] || elements != length[slot])) {
            mismatched[i] = true;
        }
        if (roundMode[i] == ONE_ROUND_FLOAT32 && mode == ONE_ROUND_FLOAT32 && !mismatched[i]) {
            maxBits[slot] = kernels.loadFloatBits(packet.buffer(), packet.elementIndex(0), elements, staged[slot],
                    rank * capacity, maxBits[slot]);
        }
        return roundMode[i];
    }

    /**
     * Called once a round of (set, slot) is complete: for a one-round round, computes its result
     * into the processor's and exponents' registers of (set, slot).
     */
    void complete(int set, int slot, Processor processor, Exponents exponents, PayloadKernels kernels) {
        int i = set * slots + slot;
        if (roundMode[i] == TWO_ROUNDS) {
            return;
        }
        if (roundMode[i] == ONE_ROUND_INT32) {
            // The processor has the sums; e0 and e1 held tags, which mean nothing in the result.
            exponents.set(set, slot, 0, mismatched[i] ? OneRound.FLAG_MISMATCH : BlockQuantizer.FLAG_NONE);
            return;
        }
        if (mismatched[i]) {
            exponents.set(set, slot, BlockQuantizer.MIN_EXPONENT, OneRound.FLAG_MISMATCH);
            processor.overwrite(set, slot, 0);
            return;
        }
        int bits = maxBits[slot];
        int exponent = BlockQuantizer.exponent(bits);
        int flag = BlockQuantizer.flag(bits);
        exponents.set(set, slot, exponent, flag);
        int elements = length[slot];
        int[] sums = processor.overwrite(set, slot, elements);
        if (flag != BlockQuantizer.FLAG_NONE) {
            // As in two rounds: every worker sends zeros for a block it cannot carry.
            Arrays.fill(sums, 0, elements, 0);
            return;
        }
        double scale = BlockQuantizer.scale(exponent, workers);
        int[] values = staged[slot];
        for (int rank = 0; rank < workers; rank++) {
            kernels.quantizeBits(values, rank * capacity, elements, scale, sums, rank == 0);
        }
    }

    /** Whether the round of (set, slot) is a one-round round (of either type). */
    boolean oneRound(int set, int slot) {
        return roundMode[set * slots + slot] != TWO_ROUNDS;
    }

    /** Whether the result of (set, slot) must be poisoned: its contributions disagreed. */
    boolean mismatched(int set, int slot) {
        return mismatched[set * slots + slot];
    }
}
