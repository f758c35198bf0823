package io.switchml.launch;

/** Worker processes or the emulated rack could not be run; the message says which part failed and how. */
public class LaunchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public LaunchException(String message) {
        super(message);
    }
}
