package io.switchml.controller;

import io.switchml.control.ControllerAddress;
import io.switchml.control.ControllerCredentials;
import io.switchml.protocol.LeafRanks;
import io.switchml.protocol.ProtocolConstants;

/**
 * A switch that is a leaf of a two-level hierarchy (docs/ARCHITECTURE.md section 9): it aggregates
 * the contiguous ranks {@code [I*n/L, (I+1)*n/L)} of every job and joins the spine's controller as
 * rank I of a job of L workers with the same name ({@link LeafRanks} says which ranks a leaf serves).
 *
 * @param spine          the spine's controller
 * @param leafIndex      I, 0..leaves-1
 * @param leaves         L, 1..{@link ProtocolConstants#MAX_WORKERS}
 * @param uplinkAddress  this leaf's dataplane address as the spine sees it (IPv4, dotted); null or
 *                       empty: the switch's bind address, or the local address of the route to the spine
 * @param spineCredentials how the leaf proves itself to a protected spine: TLS, and the spine's operator
 *                       token (which a spine that requires job secrets accepts for every job's calls)
 */
public record LeafRole(ControllerAddress spine, int leafIndex, int leaves, String uplinkAddress,
                       ControllerCredentials spineCredentials) {
    /** Under an unprotected spine (plaintext, no token). */
    public LeafRole(ControllerAddress spine, int leafIndex, int leaves, String uplinkAddress) {
        this(spine, leafIndex, leaves, uplinkAddress, ControllerCredentials.NONE);
    }

    public LeafRole {
        if (spineCredentials == null) {
            throw new IllegalArgumentException("spineCredentials: use ControllerCredentials.NONE for none");
        }
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
}
