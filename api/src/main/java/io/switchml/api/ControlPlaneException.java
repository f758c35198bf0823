package io.switchml.api;

/** The controller refused a request, or could not be reached in time. */
public class ControlPlaneException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    public ControlPlaneException(String message, Throwable cause) {
        super(message, cause);
    }
}
