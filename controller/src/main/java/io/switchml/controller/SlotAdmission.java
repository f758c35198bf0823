package io.switchml.controller;

import io.grpc.Status;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.SlotPool;

/**
 * Admission control: how many slots per thread (the window) a job gets from the switch's aggregator
 * pool when all its ranks have joined. Slots are counted in number and in register bytes
 * ({@link JobSpec#slotBytes}: a slot of 60 KiB packets weighs 480 of 128 B), so what fits is the
 * least of the free slots, the per-job quota and the free bytes over the job's slot size.
 *
 * <ul>
 *   <li>The job asks for threads x slotsPerThread slots. If that fits in the free pool and in the
 *       per-job quota, it gets what it asked for.</li>
 *   <li>Otherwise, if at least {@link #MIN_SLOTS_PER_THREAD} slots per thread fit (or what it asked
 *       for, if that is less), it gets the largest window that fits: floor(grantable / threads) slots per
 *       thread. The workers use any window of 1 slot or more; a smaller one only costs throughput.</li>
 *   <li>Otherwise the join is refused with RESOURCE_EXHAUSTED, naming the pool, what is in use, the
 *       quota and the request.</li>
 * </ul>
 * A pure function of the request and a {@link SlotPool} snapshot; the switch checks the pool again
 * when the job is installed.
 */
final class SlotAdmission {
    /** Below this many slots per thread a job would crawl; it is refused rather than shrunk further. */
    static final int MIN_SLOTS_PER_THREAD = 8;

    /**
     * What a job gets.
     *
     * @param slotsPerThread the window each worker thread uses
     * @param reason         why it is smaller than asked; empty when the job got what it asked for
     */
    record Grant(int slotsPerThread, String reason) {
        boolean reduced() {
            return !reason.isEmpty();
        }
    }

    private SlotAdmission() {
    }

    /**
     * The window job {@code jobName} gets.
     *
     * @throws ControlException RESOURCE_EXHAUSTED when not even the minimum window fits
     */
    static Grant grant(String jobName, int threads, int slotsPerThread, long slotBytes, SlotPool pool) {
        return grant(jobName, threads, slotsPerThread, slotBytes, pool, Tenant.UNLIMITED);
    }

    /**
     * Whose jobs share a quota ({@link Caller#tenantOf}), how many more register bytes and slots its jobs may
     * hold, and what limits them (named in a refusal).
     */
    record Tenant(String name, long freeBytes, long freeSlots, String limit) {
        static final Tenant UNLIMITED = new Tenant("", Long.MAX_VALUE, Long.MAX_VALUE, "");

        Tenant(String name, long freeBytes) {
            this(name, freeBytes, Long.MAX_VALUE, "--tenant-quota-bytes");
        }
    }

    /** As {@link #grant(String, int, int, long, SlotPool)}, within the tenant's quota too. */
    static Grant grant(String jobName, int threads, int slotsPerThread, long slotBytes, SlotPool pool, Tenant tenant) {
        long asked = (long) threads * slotsPerThread;
        int poolGrantable = Math.max(0, pool.grantableSlots(slotBytes));
        int grantable = (int) Math.min(Math.min(poolGrantable, Math.max(0, tenant.freeBytes()) / Math.max(1, slotBytes)),
                Math.max(0, tenant.freeSlots()));
        if (asked <= grantable) {
            return new Grant(slotsPerThread, "");
        }
        int fitting = grantable / threads;
        int minimum = Math.min(MIN_SLOTS_PER_THREAD, slotsPerThread);
        String request = "job '" + jobName + "' asks for " + threads + " threads x " + slotsPerThread + " slots = "
                + asked + " slots of " + slotBytes + " bytes, but " + (grantable < poolGrantable
                ? "its tenant " + tenant.name() + " may hold only " + Math.max(0, tenant.freeBytes()) + " more bytes of"
                + " register memory" + (tenant.freeSlots() < Long.MAX_VALUE ? " and " + Math.max(0, tenant.freeSlots())
                + " more slots" : "") + " (" + tenant.limit() + ")" : pool.describe());
        if (fitting < minimum) {
            throw new ControlException(Status.RESOURCE_EXHAUSTED, request + "; not even " + minimum
                    + " slots per thread (" + (long) minimum * threads + " slots) are left for it. Wait for a job to end,"
                    + " ask for fewer slots (slotsPerThread, threads), or start the switch with a larger --pool-slots,"
                    + " --pool-bytes, --tenant-share, --tenant-quota-bytes or --job-quota");
        }
        return new Grant(fitting, request + "; it gets " + fitting + " slots per thread (" + (long) fitting * threads
                + " slots) instead");
    }
}
