package io.switchml.dataplane;

/**
 * A job was not installed because it asks for more slots, or register memory, than the switch's
 * aggregator pool can give it now (see {@link SlotPool#grantableSlots(long)}). Nothing changed on the switch.
 */
public final class InsufficientSlotsException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient SlotPool pool;
    private final int requestedSlots;

    InsufficientSlotsException(JobSpec spec, SlotPool pool) {
        super("job " + spec.jobNumber() + " '" + spec.name() + "' asks for " + spec.threads() + " threads x "
                + spec.slotsPerThread() + " slots = " + spec.slots() + " slots (" + spec.memoryBytes() + " bytes), but "
                + pool.describe() + ", so at most " + Math.max(0, pool.grantableSlots(JobSpec.slotBytes(spec.size(),
                spec.workers()))) + " can be given now");
        this.pool = pool;
        this.requestedSlots = spec.slots();
    }

    /** The pool when the job was refused. */
    public SlotPool pool() {
        return pool;
    }

    public int requestedSlots() {
        return requestedSlots;
    }
}
