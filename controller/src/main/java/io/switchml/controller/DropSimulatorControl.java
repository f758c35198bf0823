package io.switchml.controller;

import io.grpc.Status;
import io.switchml.controller.proto.DropProbabilities;
import io.switchml.controller.proto.SetDropProbabilitiesRequest;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.FaultInjectionRefusedException;

/**
 * Sets the switch's drop simulator at run time. The switch publishes the probabilities through
 * volatile fields that its receive threads read per packet; the lock here only keeps two concurrent
 * requests that each set one probability from undoing each other.
 */
final class DropSimulatorControl {
    private final AggregationSwitch dataplane;

    DropSimulatorControl(AggregationSwitch dataplane) {
        this.dataplane = dataplane;
    }

    /** The probabilities in effect now. */
    DropProbabilities current() {
        return DropProbabilities.newBuilder().setIngress(dataplane.ingressDropProbability())
                .setEgress(dataplane.egressDropProbability()).build();
    }

    /**
     * Sets the probabilities the request has, keeps the others; returns those in effect.
     *
     * @throws ControlException INVALID_ARGUMENT, changing nothing, when one is outside [0, 1);
     *                          PERMISSION_DENIED when the switch does not allow fault injection
     */
    synchronized DropProbabilities set(SetDropProbabilitiesRequest request) {
        if (!request.hasIngress() && !request.hasEgress()) {
            throw new ControlException(Status.INVALID_ARGUMENT, "set the ingress or the egress drop probability, or both");
        }
        double ingress = request.hasIngress() ? check("ingress", request.getIngress()) : dataplane.ingressDropProbability();
        double egress = request.hasEgress() ? check("egress", request.getEgress()) : dataplane.egressDropProbability();
        try {
            dataplane.setDropProbabilities(ingress, egress);
        } catch (FaultInjectionRefusedException e) {
            throw new ControlException(Status.PERMISSION_DENIED, e.getMessage());
        }
        return current();
    }

    /** 1 would drop every packet: no all-reduce could ever finish. */
    private static double check(String which, double probability) {
        if (!(probability >= 0.0 && probability < 1.0)) {
            throw new ControlException(Status.INVALID_ARGUMENT, which + " drop probability " + probability
                    + " is outside [0, 1)");
        }
        return probability;
    }
}
