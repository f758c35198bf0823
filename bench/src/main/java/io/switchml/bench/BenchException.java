package io.switchml.bench;

import io.switchml.launch.LaunchException;

/**
 * The benchmark could not complete; the message says which worker failed and how. A failure of the
 * worker processes or the rack themselves is the {@link LaunchException} this extends.
 */
public final class BenchException extends LaunchException {
    private static final long serialVersionUID = 1L;

    public BenchException(String message) {
        super(message);
    }
}
