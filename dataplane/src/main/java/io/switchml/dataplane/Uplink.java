package io.switchml.dataplane;

import java.net.InetSocketAddress;

/**
 * A leaf switch's uplink block (docs/ARCHITECTURE.md section 9): for a job whose sums go on to a
 * spine switch, it remembers which slot copies wait for the spine's result and for which round.
 *
 * <p>When a slot copy completes locally, the switch program writes the partial result (the maxima
 * of the exponents, the int32 sums) over the packet and sends it to the spine as this leaf's
 * contribution; the copy then waits for the spine. A local worker's retransmission into a waiting
 * copy sends the partial again, so the workers' timers drive recovery at both levels and the leaf
 * keeps no timer. A packet from the spine for a copy that waits with the same round (tsi) is the
 * global result: it replaces the copy's registers and goes to the local workers; anything else from
 * the spine is stale and dropped. Arrays are allocated at installation; nothing per packet.
 */
final class Uplink {
    private final UplinkSpec spec;
    private final int slots;
    private final int spineJobNumber;
    /** spine[thread]: where thread's slots go, resolved once. */
    private final InetSocketAddress[] spine;
    /** waiting[set * slots + slot]: the copy's partial went up and its spine result is not in yet. */
    private final boolean[] waiting;
    /** round[set * slots + slot]: the tsi of the round that waits. */
    private final int[] round;

    Uplink(int slots, int threads, UplinkSpec spec) {
        this.spec = spec;
        this.slots = slots;
        this.spineJobNumber = spec.spineJobNumber();
        this.spine = new InetSocketAddress[threads];
        for (int thread = 0; thread < threads; thread++) {
            spine[thread] = new InetSocketAddress(spec.spineAddress(), spec.spinePort(thread));
        }
        this.waiting = new boolean[2 * slots];
        this.round = new int[2 * slots];
    }

    UplinkSpec spec() {
        return spec;
    }

    int spineJobNumber() {
        return spineJobNumber;
    }

    /** The spine port thread's slots go to. */
    InetSocketAddress spine(int thread) {
        return spine[thread];
    }

    /** The copy's round {@code tsi} completed locally: its partial goes up, and it waits for the spine. */
    void awaitSpine(int set, int slot, int tsi) {
        int i = set * slots + slot;
        waiting[i] = true;
        round[i] = tsi;
    }

    /** Whether the copy's partial went up and the spine's result has not come back. */
    boolean waiting(int set, int slot) {
        return waiting[set * slots + slot];
    }

    /**
     * A result from the spine for (set, slot) of round {@code tsi}: true (and the copy no longer
     * waits) when the copy waits for exactly that round; false for a stale or unexpected one.
     */
    boolean accept(int set, int slot, int tsi) {
        int i = set * slots + slot;
        if (!waiting[i] || round[i] != tsi) {
            return false;
        }
        waiting[i] = false;
        return true;
    }
}
