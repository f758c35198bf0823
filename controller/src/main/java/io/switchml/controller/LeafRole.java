package io.switchml.controller;

import io.switchml.control.ControllerAddress;
import io.switchml.protocol.ProtocolConstants;

/**
 * A switch that is a leaf of a two-level hierarchy (docs/ARCHITECTURE.md section 9): it aggregates
 * the contiguous ranks {@code [I*n/L, (I+1)*n/L)} of every job and joins the spine's controller as
 * rank I of a job of L workers with the same name.
 *
 * @param spine          the spine's controller
 * @param leafIndex      I, 0..leaves-1
 * @param leaves         L, 1..{@link ProtocolConstants#MAX_WORKERS}
 * @param uplinkAddress  this leaf's dataplane address as the spine sees it (IPv4, dotted); null or
 *                       empty: the switch's bind address, or the local address of the route to the spine
 */
public record LeafRole(ControllerAddress spine, int leafIndex, int leaves, String uplinkAddress) {
    public LeafRole {
        if (spine == null) {
            throw new IllegalArgumentException("a leaf needs the spine's controller address (--spine HOST:PORT)");
        }
        if (leaves < 1 || leaves > ProtocolConstants.MAX_WORKERS) {
            throw new IllegalArgumentException("--leaves " + leaves + " is outside 1.." + ProtocolConstants.MAX_WORKERS);
        }
        if (leafIndex < 0 || leafIndex >= leaves) {
            throw new IllegalArgumentException("--leaf-index " + leafIndex + " is outside 0.." + (leaves - 1)
                    + " (--leaves " + leaves + ")");
        }
        if (uplinkAddress != null && !uplinkAddress.isEmpty() && JoinValidator.ipv4(uplinkAddress) == null) {
            throw new IllegalArgumentException("uplink address '" + uplinkAddress + "' is not an IPv4 address");
        }
    }

    /** The first rank leaf {@code leaf} serves in a job of {@code workers} ranks. */
    public static int firstRank(int leaf, int leaves, int workers) {
        return (int) ((long) leaf * workers / leaves);
    }

    /** The leaf that serves {@code rank} in a job of {@code workers} ranks over {@code leaves} leaves. */
    public static int leafOf(int rank, int leaves, int workers) {
        int leaf = (int) ((long) rank * leaves / workers);
        // floor(r L / n) can land one leaf low or high of the rounding in firstRank; settle it.
        while (leaf + 1 < leaves && firstRank(leaf + 1, leaves, workers) <= rank) {
            leaf++;
        }
        while (leaf > 0 && firstRank(leaf, leaves, workers) > rank) {
            leaf--;
        }
        return leaf;
    }

    /** The ranks leaf {@code leaf} serves, as text ("4..7"). */
    static String ranksOf(int leaf, int leaves, int workers) {
        return firstRank(leaf, leaves, workers) + ".." + (firstRank(leaf + 1, leaves, workers) - 1);
    }
}
