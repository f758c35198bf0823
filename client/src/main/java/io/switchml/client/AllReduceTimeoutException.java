package io.switchml.client;

/** An all-reduce did not complete within the operation timeout. */
public class AllReduceTimeoutException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    public AllReduceTimeoutException(String message) {
        super(message);
    }
}
