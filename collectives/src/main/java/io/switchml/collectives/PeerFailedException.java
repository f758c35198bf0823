package io.switchml.collectives;

import io.switchml.api.SwitchMLException;

import java.util.List;

/**
 * A connection to a peer (another worker, or a parameter server) closed or broke while an operation
 * needed it: the peer died, closed its instance, or gave up after an error of its own. The instance
 * cannot be used any more; close it on every worker and open new ones.
 */
public class PeerFailedException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    private final List<Integer> failedRanks;

    public PeerFailedException(String message, List<Integer> failedRanks, Throwable cause) {
        super(message, cause);
        this.failedRanks = List.copyOf(failedRanks);
    }

    /** The worker ranks whose connections failed, ascending; empty when the peer was a server. */
    public List<Integer> failedRanks() {
        return failedRanks;
    }
}
