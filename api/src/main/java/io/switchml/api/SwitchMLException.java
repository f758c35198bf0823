package io.switchml.api;

/** Base of every error the worker library reports. */
public class SwitchMLException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SwitchMLException(String message) {
        super(message);
    }

    public SwitchMLException(String message, Throwable cause) {
        super(message, cause);
    }
}
