package io.switchml.api;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.ServiceLoader;

/**
 * An all-reduce without a switch that a job falls back to when no switch is left
 * ({@code switchml.fallback}). Implementations live in modules that depend on this one (the ring
 * in switchml-collectives) and are found with {@link ServiceLoader}.
 *
 * <p>Each worker binds its endpoint when it joins the job, and the workers exchange the addresses
 * through the controller while it is still there; only after a switch failure do they connect.
 */
public interface FallbackProvider {
    /** The value of {@code switchml.fallback} that selects it, e.g. {@code ring}. */
    String name();

    /** Binds this worker's endpoint on {@code localAddress} (any free port). */
    Endpoint bind(Job job, InetAddress localAddress);

    /**
     * What the fallback needs to know of the job it stands in for: this worker's rank, the number of
     * workers, how long to wait for the others to connect and for one operation.
     */
    record Job(int rank, int workers, Duration connectTimeout, Duration operationTimeout) {
    }

    /** A worker's bound endpoint. */
    interface Endpoint extends AutoCloseable {
        /** {@code host:port}, as the other workers reach it. */
        String address();

        /**
         * Connects to every worker (their {@link #address()}es in rank order) and returns the
         * all-reduce; returns once all are connected, or fails after the configured join timeout.
         */
        AllReduce open(List<String> endpoints);

        @Override
        void close();
    }

    /** The provider called {@code name}, or a clear error when its module is not on the class path. */
    static FallbackProvider named(String name) {
        for (FallbackProvider p : ServiceLoader.load(FallbackProvider.class, FallbackProvider.class.getClassLoader())) {
            if (p.name().equals(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("switchml.fallback=" + name + " needs an implementation on the class path"
                + " (for ring: the switchml-collectives module), and none was found");
    }
}
