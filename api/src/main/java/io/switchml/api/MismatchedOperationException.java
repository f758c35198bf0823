package io.switchml.api;

/**
 * The workers of a job did not run the same all-reduce: tensor length, element type, operation or
 * the order of calls differ between them. Every worker involved gets this error, and no value was
 * written for the all-reduce in question.
 */
public class MismatchedOperationException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    public MismatchedOperationException(String message) {
        super(message);
    }
}
