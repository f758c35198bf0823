package io.switchml.api;

import java.util.List;

/**
 * An all-reduce did not complete within the operation timeout. Its message ends with what the
 * controller could tell about the ranks the switch is still waiting for.
 */
public class AllReduceTimeoutException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    private final List<Integer> missingRanks;

    public AllReduceTimeoutException(String message) {
        super(message);
        this.missingRanks = List.of();
    }

    public AllReduceTimeoutException(String message, List<Integer> missingRanks, Throwable cause) {
        super(message, cause);
        this.missingRanks = List.copyOf(missingRanks);
    }

    /**
     * The ranks the switch was still waiting for when the timeout was diagnosed, ascending; empty
     * when none or when the controller could not be asked (the message says which).
     */
    public List<Integer> missingRanks() {
        return missingRanks;
    }
}
