package io.switchml.client;

/**
 * Faults a worker injects into its own datagrams, to test loss recovery without a lossy network:
 * every datagram a worker thread sends or receives is dropped with probability {@code dropRate},
 * otherwise duplicated with probability {@code duplicateRate}, and each copy is held back with
 * probability {@code delayRate} for a uniformly random 0..{@code maxDelayMicros} microseconds
 * (which also reorders). Decisions come from a generator seeded with ({@code seed}, rank, worker
 * thread), so a failing run can be replayed with the same seed (as far as the packets themselves
 * come in the same order).
 *
 * <p>Set through {@code switchml.faultDropRate}, {@code switchml.faultDuplicateRate},
 * {@code switchml.faultDelayRate}, {@code switchml.faultMaxDelayMicros} and
 * {@code switchml.faultSeed}; all off by default, and then nothing is installed at all.
 *
 * @param dropRate       probability that a datagram is dropped, in [0, 1]
 * @param duplicateRate  probability that a datagram not dropped is sent or delivered twice, in [0, 1]
 * @param delayRate      probability that each copy is delayed, in [0, 1]; only with {@code maxDelayMicros > 0}
 * @param maxDelayMicros longest delay, microseconds; 0: nothing is delayed
 * @param seed           seed of the decisions
 */
public record FaultInjection(double dropRate, double duplicateRate, double delayRate, long maxDelayMicros, long seed) {
    /** No faults. */
    public static final FaultInjection OFF = new FaultInjection(0, 0, 1, 0, 0);

    public FaultInjection {
        check("drop rate", dropRate);
        check("duplicate rate", duplicateRate);
        check("delay rate", delayRate);
        if (maxDelayMicros < 0) {
            throw new IllegalArgumentException("maximum delay must be >= 0 microseconds, not " + maxDelayMicros);
        }
    }

    /** The faults a configuration asks for. */
    public static FaultInjection of(SwitchMLConfig config) {
        return config.faultInjection();
    }

    /** Whether any fault is injected; when not, workers install nothing and draw no random number. */
    public boolean enabled() {
        return dropRate > 0 || duplicateRate > 0 || delays();
    }

    /** Whether any datagram may be delayed. */
    public boolean delays() {
        return maxDelayMicros > 0 && delayRate > 0;
    }

    private static void check(String what, double p) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException(what + " must be in [0, 1], not " + p);
        }
    }
}
