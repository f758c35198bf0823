package io.switchml.api;

/**
 * Some worker's tensor held NaN, an infinity or a value with |x| &gt;= 2^127, which block floating
 * point cannot carry. The all-reduce still ran to the end on every worker (so the job stays usable);
 * the output elements of the affected blocks are NaN, and every other element is exact.
 */
public class UnrepresentableValueException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    public UnrepresentableValueException(String message) {
        super(message);
    }
}
