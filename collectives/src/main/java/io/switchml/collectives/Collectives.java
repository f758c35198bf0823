package io.switchml.collectives;

import io.switchml.api.AllReduce;

/**
 * Opens a baseline all-reduce by name, so benchmarks and training code can switch algorithm by
 * configuration: {@code ring} ({@link RingAllReduce}), {@code ps} ({@link ParameterServerAllReduce}), or the
 * compression baselines {@code topk} and {@code qsgd} ({@link CompressedAllReduce}, settings in
 * {@link CollectiveConfig#compression()}).
 * Every worker of the job calls {@code open} with the same configuration except its rank; it returns
 * once this worker is connected to the peers it needs.
 *
 * <pre>{@code
 * CollectiveConfig config = CollectiveConfig.builder()
 *         .algorithm("ring")
 *         .endpoints("10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000,10.0.0.4:7000")
 *         .rank(rank)
 *         .build();
 * try (AllReduce allReduce = Collectives.open(config)) {
 *     allReduce.allReduce(gradient, ReduceOp.MEAN);
 * }
 * }</pre>
 */
public final class Collectives {
    private Collectives() {
    }

    /** Opens the configured algorithm, binding this rank's endpoint (and its server's, if it hosts one). */
    public static AllReduce open(CollectiveConfig config) {
        return open(config, null, null);
    }

    /**
     * Opens the configured algorithm on listeners bound beforehand (e.g. on ephemeral ports).
     *
     * @param workerListener this rank's bound endpoint, or null to bind {@code endpoints[rank]}
     * @param serverListener {@code ps} with servers in the workers only: the endpoint of the server this rank hosts,
     *                       or null to bind {@code servers[rank]}
     */
    public static AllReduce open(CollectiveConfig config, Listener workerListener, Listener serverListener) {
        switch (config.algorithm()) {
            case RING:
                if (serverListener != null) {
                    serverListener.close();
                    throw new IllegalArgumentException("the ring has no servers, but a server listener was given");
                }
                return RingAllReduce.open(config, workerListener);
            case PARAMETER_SERVER:
                return ParameterServerAllReduce.open(config, workerListener, serverListener);
            case TOPK:
            case QSGD:
                if (serverListener != null) {
                    serverListener.close();
                    throw new IllegalArgumentException(config.algorithm() + " runs on the ring's transport and has no servers,"
                            + " but a server listener was given");
                }
                return CompressedAllReduce.open(config, workerListener);
            default:
                throw new IllegalArgumentException("no implementation for algorithm " + config.algorithm());
        }
    }
}
