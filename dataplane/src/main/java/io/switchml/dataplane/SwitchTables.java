package io.switchml.dataplane;

import io.switchml.protocol.ProtocolConstants;

/**
 * One consistent version of everything the control plane installs: the worker table and the jobs
 * by number. Immutable; a change builds a new version. Keeping both in one object means a receive
 * thread never sees a worker entry whose job is missing or is a different job with fewer workers.
 */
final class SwitchTables {
    static final SwitchTables EMPTY = new SwitchTables(WorkerTable.EMPTY, UplinkTable.EMPTY,
            new InstalledJob[ProtocolConstants.MAX_JOBS], 0, 0, 0);

    private final WorkerTable workers;
    /** Where the spines of leaf jobs send from (docs/ARCHITECTURE.md section 9). */
    private final UplinkTable uplinks;
    /** jobs[jobNumber], null where none is installed. Never written after construction. */
    private final InstalledJob[] jobs;
    /** Slots and register bytes the installed jobs hold together, and how many jobs: this version's pool accounting. */
    private final int usedSlots;
    private final long usedBytes;
    private final int jobCount;

    private SwitchTables(WorkerTable workers, UplinkTable uplinks, InstalledJob[] jobs, int usedSlots, long usedBytes,
                         int jobCount) {
        this.workers = workers;
        this.uplinks = uplinks;
        this.jobs = jobs;
        this.usedSlots = usedSlots;
        this.usedBytes = usedBytes;
        this.jobCount = jobCount;
    }

    WorkerTable workers() {
        return workers;
    }

    UplinkTable uplinks() {
        return uplinks;
    }

    /** The job with this number (0..255), or null. */
    InstalledJob job(int jobNumber) {
        return jobs[jobNumber];
    }

    int usedSlots() {
        return usedSlots;
    }

    long usedBytes() {
        return usedBytes;
    }

    int jobCount() {
        return jobCount;
    }

    /**
     * This version plus the job of {@code spec}, whose registers are allocated once the checks pass.
     *
     * @param uplink where its partial results go (a leaf's job), or null
     * @param ipcFiles where co-located workers write its packets and read its results, or null
     * @throws IllegalStateException when its number, one of its worker endpoints or its spine job is taken
     */
    SwitchTables withJob(JobSpec spec, UplinkSpec uplink, IpcDirectory.JobFiles ipcFiles, OwnSources own) {
        InstalledJob existing = jobs[spec.jobNumber()];
        if (existing != null) {
            throw new IllegalStateException("job number " + spec.jobNumber() + " is already in use by job '"
                    + existing.spec().name() + "'");
        }
        WorkerTable newWorkers = workers.withJob(spec, own);
        UplinkTable newUplinks = uplink == null ? uplinks : uplinks.withJob(spec.jobNumber(), uplink);
        InstalledJob[] newJobs = jobs.clone();
        newJobs[spec.jobNumber()] = new InstalledJob(spec, uplink, ipcFiles);
        return new SwitchTables(newWorkers, newUplinks, newJobs, usedSlots + spec.slots(), usedBytes + spec.memoryBytes(),
                jobCount + 1);
    }

    /** This version without the job of that number (the same version when there is none). */
    SwitchTables withoutJob(int jobNumber, OwnSources own) {
        InstalledJob job = jobs[jobNumber];
        if (job == null) {
            return this;
        }
        InstalledJob[] newJobs = jobs.clone();
        newJobs[jobNumber] = null;
        UplinkTable newUplinks = job.uplinkSpec() == null ? uplinks : uplinks.withoutJob(job.uplinkSpec());
        return new SwitchTables(workers.withoutJob(job.spec(), own), newUplinks, newJobs, usedSlots - job.slots(),
                usedBytes - job.spec().memoryBytes(), jobCount - 1);
    }
}
