package io.switchml.tensorflow;

import org.tensorflow.Session;

/** A checksum of every variable of a session's graph, in graph order: equal on workers whose variables are bit-identical. */
public final class VariableChecksum {
    private VariableChecksum() {
    }

    public static long of(Session session) {
        return GraphVariables.checksum(session, GraphVariables.all(session.graph()));
    }
}
