package io.switchml.dataplane;

/**
 * The drop simulator's settings, shared by every port and changeable while the switch runs:
 * the probability that a packet is dropped on arrival (ingress) and that each result datagram is
 * dropped before it leaves (egress).
 */
final class DropProbabilities {
    private volatile double ingress;
    private volatile double egress;

    DropProbabilities(double ingress, double egress) {
        set(ingress, egress);
    }

    void set(double ingress, double egress) {
        check("ingress", ingress);
        check("egress", egress);
        this.ingress = ingress;
        this.egress = egress;
    }

    double ingress() {
        return ingress;
    }

    double egress() {
        return egress;
    }

    static void check(String which, double probability) {
        if (!(probability >= 0.0 && probability <= 1.0)) {
            throw new IllegalArgumentException(which + " drop probability " + probability + " is outside [0, 1]");
        }
    }
}
