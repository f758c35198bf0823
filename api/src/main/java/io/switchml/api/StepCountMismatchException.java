package io.switchml.api;

/**
 * The ranks of a job ran different numbers of steps: one ended its training (or epoch) while
 * another still had data, and neither let the other finish by joining ({@link UnevenInputs#join}).
 * Every rank that took part in the failed step raises it, so none ends as if all went well.
 */
public class StepCountMismatchException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    public StepCountMismatchException(String message) {
        super(message);
    }
}
