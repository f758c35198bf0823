package io.switchml.dataplane;

/** The switch program's next-step selector: what to do with a packet that passed the registers. */
final class NextStepSelector {
    private NextStepSelector() {
    }

    /**
     * @param retransmission the sender had already contributed to this copy of the slot
     * @param complete       no worker is missing in the slot's round (after this packet)
     */
    static NextStep select(boolean retransmission, boolean complete) {
        if (retransmission) {
            // Its contribution is already in: answer only once the result exists.
            return complete ? NextStep.UNICAST : NextStep.DROP;
        }
        return complete ? NextStep.MULTICAST : NextStep.CONSUME;
    }
}
