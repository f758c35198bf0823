package io.switchml.dataplane;

/**
 * The switch's aggregator pool at one moment: how many slots it has in all, how many the installed
 * jobs hold, and the most one job may hold. Every installed job holds {@link JobSpec#slots()} slots
 * (each slot is two copies of k int32 accumulators, exponents, a seen-bitmap and a counter) from
 * its installation until its removal.
 *
 * @param poolSlots     slots of all jobs together ({@link SwitchConfig#poolSlots})
 * @param jobQuotaSlots the most slots one job may hold ({@link SwitchConfig#jobQuotaSlots})
 * @param usedSlots     slots the installed jobs hold
 * @param jobs          installed jobs
 */
public record SlotPool(int poolSlots, int jobQuotaSlots, int usedSlots, int jobs) {
    public int freeSlots() {
        return poolSlots - usedSlots;
    }

    /** The most slots a job installed now can get: what is free, within the per-job quota. */
    public int grantableSlots() {
        return Math.min(jobQuotaSlots, freeSlots());
    }

    /** The pool in words, for error messages. */
    public String describe() {
        return "the switch's aggregator pool has " + poolSlots + " slots, " + usedSlots + " in use by " + jobs
                + (jobs == 1 ? " job" : " jobs") + ", " + freeSlots() + " free; the per-job quota is " + jobQuotaSlots
                + " slots";
    }
}
