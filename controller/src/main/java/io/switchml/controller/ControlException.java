package io.switchml.controller;

import io.grpc.Status;

/** A refused control request, with the gRPC status to answer it with. */
final class ControlException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Status status;

    ControlException(Status status, String message) {
        super(message);
        this.status = status.withDescription(message);
    }

    Status status() {
        return status;
    }
}
