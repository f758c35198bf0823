package io.switchml.collectives;

import java.io.IOException;
import java.util.List;

/**
 * A link closed or broke. Raised by {@link Link}; whoever drives the I/O turns it into the public
 * {@link PeerFailedException}, with what it was doing at the time.
 */
final class LinkFailure extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient List<Integer> peerRanks;

    LinkFailure(String message, List<Integer> peerRanks, IOException cause) {
        super(message, cause);
        this.peerRanks = peerRanks;
    }

    /** The failed peer's rank as a one-element list, or empty for a server. */
    List<Integer> peerRanks() {
        return peerRanks;
    }
}
