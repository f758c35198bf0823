package io.switchml.bench;

/** The benchmark could not complete; the message says which worker failed and how. */
public final class BenchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BenchException(String message) {
        super(message);
    }
}
