package io.switchml.collectives;

import io.switchml.api.AllReduceTimeoutException;

import java.util.List;

/**
 * A collective operation, or setting up the connections, did not finish in time. The message says
 * what was waited for; {@link #missingRanks()} lists the worker ranks it was waiting on (for the
 * ring, a neighbour that may itself be waiting for another rank; for the parameter server, the
 * ranks the server never heard from).
 */
public class CollectiveTimeoutException extends AllReduceTimeoutException {
    private static final long serialVersionUID = 1L;

    public CollectiveTimeoutException(String message, List<Integer> missingRanks) {
        super(message, missingRanks, null);
    }
}
