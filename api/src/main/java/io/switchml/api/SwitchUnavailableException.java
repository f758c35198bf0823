package io.switchml.api;

/**
 * The connection to the switch's controller broke while the context was in a job: the switch
 * process (switch and embedded controller) died, restarted or became unreachable, and with it the
 * job's state on the switch. Every pending and later operation of this context fails with this
 * exception. Close the context and, once the switch is back, join again with every worker.
 */
public class SwitchUnavailableException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    public SwitchUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The same failure, raised again by a later call (with the first one as its cause). */
    public SwitchUnavailableException(SwitchUnavailableException first) {
        super(first.getMessage(), first);
    }
}
