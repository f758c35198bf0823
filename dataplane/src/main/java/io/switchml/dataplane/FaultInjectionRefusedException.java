package io.switchml.dataplane;

/**
 * The drop simulator was asked to drop packets on a switch started without fault injection allowed:
 * on a shared switch it would let anyone who reaches the control plane degrade every job.
 */
public final class FaultInjectionRefusedException extends IllegalStateException {
    static final String MESSAGE = "fault injection (the drop simulator) is off on this switch; start the switch with"
            + " --allow-fault-injection (SwitchConfig.allowFaultInjection(true)) to use it, on test switches only";

    public FaultInjectionRefusedException() {
        super(MESSAGE);
    }
}
