package io.switchml.client;

import io.switchml.api.SwitchMLException;
import io.switchml.api.SwitchUnavailableException;
import io.switchml.api.WorkerFailedException;

/** How a job's first failure is raised again for later calls. */
final class Failures {
    private Failures() {
    }

    /** A failure raised again for a later call, of the same type, with the first one as its cause. */
    static SwitchMLException again(SwitchMLException first) {
        if (first instanceof WorkerFailedException w) {
            return new WorkerFailedException(w);
        }
        if (first instanceof SwitchUnavailableException u) {
            return new SwitchUnavailableException(u);
        }
        return new SwitchMLException(first.getMessage(), first);
    }
}
