package io.switchml.dataplane;

/**
 * The switch's aggregator pool at one moment: how many slots it has in all, how many the installed
 * jobs hold, and the most one job may hold; and the memory of their registers, counted in bytes,
 * since a slot of 60 KiB packets weighs 480 times one of 128 B. Every installed job holds
 * {@link JobSpec#slots()} slots (each two copies of k int32 accumulators, exponents, a seen-bitmap
 * and a counter) and {@link JobSpec#memoryBytes()} from its installation until its removal.
 *
 * @param poolSlots     slots of all jobs together ({@link SwitchConfig#poolSlots})
 * @param jobQuotaSlots the most slots one job may hold ({@link SwitchConfig#jobQuotaSlots})
 * @param usedSlots     slots the installed jobs hold
 * @param jobs          installed jobs
 * @param poolBytes     register memory of all jobs together ({@link SwitchConfig#poolBytes})
 * @param usedBytes     register memory the installed jobs hold
 */
public record SlotPool(int poolSlots, int jobQuotaSlots, int usedSlots, int jobs, long poolBytes, long usedBytes) {
    public int freeSlots() {
        return poolSlots - usedSlots;
    }

    public long freeBytes() {
        return poolBytes - usedBytes;
    }

    /** The most slots a job installed now can get, whatever their size: what is free, within the per-job quota. */
    public int grantableSlots() {
        return Math.min(jobQuotaSlots, freeSlots());
    }

    /** The most slots of {@code slotBytes} each (see {@link JobSpec#slotBytes}) a job installed now can get. */
    public int grantableSlots(long slotBytes) {
        return (int) Math.min(grantableSlots(), Math.max(0, freeBytes()) / Math.max(1, slotBytes));
    }

    /** The pool in words, for error messages. */
    public String describe() {
        return "the switch's aggregator pool has " + poolSlots + " slots, " + usedSlots + " in use by " + jobs
                + (jobs == 1 ? " job" : " jobs") + ", " + freeSlots() + " free; the per-job quota is " + jobQuotaSlots
                + " slots; of its " + poolBytes + " bytes of register memory (--pool-bytes) " + usedBytes + " are in use";
    }
}
