package io.switchml.dataplane;

import java.util.SplittableRandom;

/**
 * The switch program's drop simulator: drops packets at random, on arrival and on departure, to
 * exercise the workers' loss recovery, as SwitchML's P4 program can. One per receive thread, with
 * its own seeded generator, so a run with one port is reproducible.
 */
final class DropSimulator {
    private final DropProbabilities probabilities;
    private final SplittableRandom random;

    DropSimulator(DropProbabilities probabilities, long seed) {
        this.probabilities = probabilities;
        this.random = new SplittableRandom(seed);
    }

    boolean dropAtIngress() {
        return drop(probabilities.ingress());
    }

    boolean dropAtEgress() {
        return drop(probabilities.egress());
    }

    private boolean drop(double probability) {
        // Probability 0 draws nothing, so turning the simulator off costs one volatile read.
        return probability > 0.0 && random.nextDouble() < probability;
    }
}
