package io.switchml.dataplane;

/**
 * This project's length checker, after the {@link RoundChecker}: every contribution to a round of the
 * two-round protocol must be as long as the one that opened it (docs/ARCHITECTURE.md section 3). A
 * short packet (a tensor's last block, an exponent-only bootstrap) is legal only where every worker's
 * is equally short; any other length is a cut-off or foreign datagram and is refused, never summed
 * as if padded with zeros. One-round rounds are left to {@link OneRoundStaging}, which poisons a round
 * whose contributions disagree.
 *
 * <p>A round's first packet fixes its length, so a cut-off copy that arrives first would hold the
 * round against everyone. While the round holds only its sender's contribution, a packet of another
 * length from that same sender therefore reopens it: the sender's own retransmission replaces the
 * cut-off copy, and a round with a second contributor is never reopened.
 */
final class LengthChecker {
    /** What to do with a packet. */
    enum Verdict {
        /** As long as the round's contributions, or it opens the round. */
        ADMIT,
        /** Its sender alone has contributed and it has another length: it replaces that contribution. */
        REOPEN,
        /** Another length than the round's other contributions. */
        REFUSE
    }

    /** Recorded for a round opened by a one-round packet: {@link OneRoundStaging} checks those. */
    private static final int UNCHECKED = -1;

    private final int slots;
    /** elements[set * slots + slot]: the round's length in elements, or {@link #UNCHECKED}. */
    private final int[] elements;

    LengthChecker(int slots) {
        this.slots = slots;
        this.elements = new int[2 * slots];
    }

    /**
     * Decides on a packet of {@code packetElements} elements.
     *
     * @param opens     whether it opens the round (a new contribution to a complete or unused copy)
     * @param twoRounds whether it is a two-round packet (not the one-round mode's)
     * @param soleSender whether the round, still incomplete, holds only this packet's sender's contribution
     */
    Verdict check(int set, int slot, int packetElements, boolean opens, boolean twoRounds, boolean soleSender) {
        int i = set * slots + slot;
        if (opens) {
            elements[i] = twoRounds ? packetElements : UNCHECKED;
            return Verdict.ADMIT;
        }
        int held = elements[i];
        if (!twoRounds || held == UNCHECKED || held == packetElements) {
            return Verdict.ADMIT;
        }
        if (soleSender) {
            elements[i] = packetElements;
            return Verdict.REOPEN;
        }
        return Verdict.REFUSE;
    }
}
