package io.switchml.dataplane;

import io.switchml.protocol.ProtocolConstants;
import java.util.Optional;

/**
 * Installs and removes jobs. Changes are serialized here and published as a new
 * {@link SwitchTables} through a volatile field: the receive threads read the current version
 * with one volatile read per packet and never take a lock.
 */
final class ControlPlane {
    private volatile SwitchTables tables = SwitchTables.EMPTY;

    /** The current tables; what each packet is processed against. */
    SwitchTables tables() {
        return tables;
    }

    /**
     * Allocates the job's registers and publishes it.
     *
     * @throws IllegalStateException when the job number is in use or one of its endpoints belongs
     *                               to another job
     */
    synchronized void installJob(JobSpec spec) {
        if (spec == null) {
            throw new IllegalArgumentException("job spec is null");
        }
        tables = tables.withJob(spec);
    }

    /** Removes the job, freeing its registers and worker-table entries; an unknown number is a no-op. */
    synchronized void removeJob(int jobNumber) {
        if (jobNumber >= 0 && jobNumber < ProtocolConstants.MAX_JOBS) {
            tables = tables.withoutJob(jobNumber);
        }
    }

    Optional<JobSpec> job(int jobNumber) {
        if (jobNumber < 0 || jobNumber >= ProtocolConstants.MAX_JOBS) {
            return Optional.empty();
        }
        InstalledJob job = tables.job(jobNumber);
        return job == null ? Optional.empty() : Optional.of(job.spec());
    }

    /** The installed job's registers, for inspection and tests; null when none. */
    InstalledJob installedJob(int jobNumber) {
        return tables.job(jobNumber);
    }
}
