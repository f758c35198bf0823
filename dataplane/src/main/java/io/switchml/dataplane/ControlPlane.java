package io.switchml.dataplane;

import io.switchml.protocol.ProtocolConstants;
import java.util.Optional;

/**
 * Installs and removes jobs. Changes are serialized here and published as a new
 * {@link SwitchTables} through a volatile field: the receive threads read the current version
 * with one volatile read per packet and never take a lock.
 *
 * <p>It also keeps the aggregator pool's books: a job is installed only if its slots fit in the
 * free pool and the per-job quota, and its register memory in the free bytes, and it gives them back
 * when it is removed. The check happens
 * here, at installation, so that every way of installing a job (this project's controller,
 * SwitchML sessions) goes through it; the per-packet path never sees it.
 */
final class ControlPlane {
    private final int poolSlots;
    private final int jobQuotaSlots;
    private final long poolBytes;
    private final long oneRoundStagingBytes;
    private volatile SwitchTables tables = SwitchTables.EMPTY;
    /** The shared-memory port's files; null when the switch has none. */
    private final IpcDirectory ipc;
    /** The switch's own sources, which no worker endpoint may be; set once its ports are bound. */
    private volatile OwnSources own = OwnSources.NONE;

    /** A control plane with the default pool and quota. */
    ControlPlane() {
        this(SwitchConfig.DEFAULT_POOL_SLOTS, SwitchConfig.DEFAULT_POOL_SLOTS);
    }

    ControlPlane(int poolSlots, int jobQuotaSlots) {
        this(poolSlots, jobQuotaSlots, SwitchConfig.defaultPoolBytes(), SwitchConfig.DEFAULT_ONE_ROUND_STAGING_BYTES);
    }

    ControlPlane(int poolSlots, int jobQuotaSlots, long poolBytes, long oneRoundStagingBytes) {
        this(poolSlots, jobQuotaSlots, poolBytes, oneRoundStagingBytes, null);
    }

    ControlPlane(int poolSlots, int jobQuotaSlots, long poolBytes, long oneRoundStagingBytes, IpcDirectory ipc) {
        this.ipc = ipc;
        this.poolSlots = poolSlots;
        this.jobQuotaSlots = jobQuotaSlots;
        this.poolBytes = poolBytes;
        this.oneRoundStagingBytes = oneRoundStagingBytes;
    }

    /** The switch's own address and ports, once bound: refused as worker endpoints from now on. */
    void ownSources(OwnSources sources) {
        this.own = sources;
    }

    OwnSources ownSources() {
        return own;
    }

    /** The current tables; what each packet is processed against. */
    SwitchTables tables() {
        return tables;
    }

    /**
     * Allocates the job's registers and publishes it. A job whose one-round staging would exceed
     * the per-job limit is installed without the one-round mode (its workers learn it from the
     * installed spec, through the controller, and use two rounds).
     *
     * @return the spec as installed
     *
     * @throws InsufficientSlotsException when its slots exceed the free pool or the per-job quota, or its
     *                                     memory the free bytes
     * @throws IllegalStateException       when the job number is in use or one of its endpoints
     *                                     belongs to another job
     * @throws IllegalArgumentException    when one of its endpoints is the switch's own address and port
     */
    synchronized JobSpec installJob(JobSpec spec) {
        return installJob(spec, null);
    }

    /**
     * As {@link #installJob(JobSpec)}, for a leaf's job whose partial results go to a spine
     * (docs/ARCHITECTURE.md section 9) when {@code uplink} is not null. Such a job needs round numbers
     * (the spine's results are matched to rounds by their tsi) and runs without the one-round mode.
     */
    synchronized JobSpec installJob(JobSpec spec, UplinkSpec uplink) {
        if (spec == null) {
            throw new IllegalArgumentException("job spec is null");
        }
        if (uplink != null && (!spec.roundNumbers() || spec.oneRoundElements() > 0)) {
            throw new IllegalArgumentException("job " + spec.jobNumber() + " has a spine, so it needs round numbers and"
                    + " two rounds (the one-round mode needs the global maximum before quantizing)");
        }
        if (uplink != null && spec.authenticated()) {
            throw new IllegalArgumentException("job " + spec.jobNumber() + " has a spine; authenticated packets are not"
                    + " carried between a leaf and its spine (docs/ARCHITECTURE.md section 19)");
        }
        SwitchTables current = tables;
        SlotPool pool = slotPool(current);
        JobSpec installed = spec.oneRoundStagingBytes() > oneRoundStagingBytes ? spec.withoutOneRound() : spec;
        if (spec.slots() > pool.grantableSlots() || installed.memoryBytes() > pool.freeBytes()) {
            throw new InsufficientSlotsException(installed, pool);
        }
        // Only this project's workers use the shared-memory port; SwitchML's know nothing of it.
        // Authenticated jobs go over UDP only: the shared-memory port's records and board carry no tags.
        IpcDirectory.JobFiles files = ipc != null && installed.roundNumbers() && !installed.authenticated()
                ? ipc.createJobFiles(installed) : null;
        try {
            tables = current.withJob(installed, uplink, files, own);
        } catch (RuntimeException e) {
            if (files != null) {
                ipc.delete(files);
            }
            throw e;
        }
        return installed;
    }

    /** The most one-round staging one job may hold, in bytes. */
    long oneRoundStagingBytes() {
        return oneRoundStagingBytes;
    }

    /** The pool now. */
    SlotPool slotPool() {
        return slotPool(tables);
    }

    private SlotPool slotPool(SwitchTables version) {
        return new SlotPool(poolSlots, jobQuotaSlots, version.usedSlots(), version.jobCount(), poolBytes,
                version.usedBytes());
    }

    /** Removes the job, freeing its registers and worker-table entries; an unknown number is a no-op. */
    synchronized void removeJob(int jobNumber) {
        if (jobNumber >= 0 && jobNumber < ProtocolConstants.MAX_JOBS) {
            InstalledJob job = tables.job(jobNumber);
            tables = tables.withoutJob(jobNumber, own);
            if (job != null && job.ipcFiles() != null) {
                ipc.delete(job.ipcFiles());
            }
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
