package io.switchml.dataplane;

/**
 * This project's addition to the switch program: it recognises packets of rounds that are over.
 *
 * <p>SwitchML's bitmap checker cannot tell a late duplicate of an old round from a new
 * contribution: once a worker has moved on to the slot's other copy, its bit in this copy is clear,
 * so a delayed duplicate of its last packet here would open a new round with old values and the
 * worker's real packet would then be taken for a retransmission. This project's workers send the
 * slot's round number as the tsi (its parity is the set), so the switch keeps the round each copy
 * holds and admits a packet only if it belongs to that round, or opens a newer one. Jobs of
 * SwitchML's own workers, whose tsi means something else, run without this check.
 *
 * <p>It runs before the bitmap checker and changes nothing when it refuses a packet.
 */
final class RoundChecker {
    private final int slots;
    /** round[set * slots + slot]: the round the copy holds, valid once opened. */
    private final int[] round;
    private final boolean[] opened;

    RoundChecker(int slots) {
        this.slots = slots;
        this.round = new int[2 * slots];
        this.opened = new boolean[2 * slots];
    }

    /**
     * Decides whether a packet of {@code packetRound} may go on to the bitmap checker.
     *
     * @param seen     whether the sender's bit is set in this copy (a retransmission if admitted)
     * @param complete whether the copy's current round has every contribution (or none yet)
     * @return false for a stale packet, or one whose round does not match its set
     */
    boolean admit(int set, int slot, int packetRound, boolean seen, boolean complete) {
        if ((packetRound & 1) != set) {
            return false;
        }
        int i = set * slots + slot;
        boolean opensRound = complete && !seen;
        if (!opensRound) {
            // A contribution to the round in progress, or a retransmission to the current round.
            return opened[i] && packetRound == round[i];
        }
        if (opened[i] && packetRound - round[i] <= 0) {
            return false; // a late copy of this round or an older one
        }
        opened[i] = true;
        round[i] = packetRound;
        return true;
    }

    /** The round the copy holds, or -1 before its first; for inspection and tests. */
    int round(int set, int slot) {
        int i = set * slots + slot;
        return opened[i] ? round[i] : -1;
    }
}
