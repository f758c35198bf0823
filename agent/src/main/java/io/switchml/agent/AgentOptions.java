package io.switchml.agent;

import io.switchml.launch.AllReduceAlgorithm;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * What one agent serves: the job it joins for its rank, and where its local process reaches it.
 *
 * @param algorithm        a registered all-reduce algorithm ({@link AllReduceAlgorithm}): {@code switchml}, {@code ring},
 *                         {@code ps}, {@code topk}, {@code qsgd}, ...
 * @param controller       {@code HOST:PORT} of the switch's controller (algorithms that need a switch only)
 * @param job              the job's name at the switch (algorithms that need a switch only)
 * @param socket           the Unix-domain socket the agent listens on for requests
 * @param sharedMemory     the file the agent creates and maps, where the local process puts its tensors
 * @param sharedMemoryBytes the file's size; every tensor in flight must fit in it
 * @param settings         further {@code switchml.*} worker settings
 * @param connectTimeout   how long the agent waits for the local process to connect
 * @param operationTimeout how long one all-reduce may take before the agent gives up on the job
 * @param idleTimeout      how long the agent waits for the local process's next request before leaving the job
 */
public record AgentOptions(String algorithm, int rank, int workers, String controller, String job, Path socket,
                           Path sharedMemory, long sharedMemoryBytes, Map<String, String> settings,
                           Duration connectTimeout, Duration operationTimeout, Duration idleTimeout) {
    /** A mapped buffer is indexed by int. */
    public static final long MAX_SHARED_MEMORY_BYTES = Integer.MAX_VALUE & ~7L;

    public AgentOptions {
        AllReduceAlgorithm registered = AllReduceAlgorithm.named(algorithm);
        if (workers < 1 || rank < 0 || rank >= workers) {
            throw new IllegalArgumentException("rank " + rank + " is not in 0.." + (workers - 1) + " (workers " + workers + ")");
        }
        if (registered.needsSwitch() && (controller == null || job == null)) {
            throw new IllegalArgumentException(algorithm + " needs the controller's HOST:PORT and the job's name");
        }
        if (sharedMemoryBytes < 8 || sharedMemoryBytes > MAX_SHARED_MEMORY_BYTES) {
            throw new IllegalArgumentException("shared memory of " + sharedMemoryBytes + " bytes is outside 8.." + MAX_SHARED_MEMORY_BYTES);
        }
        settings = Map.copyOf(settings);
    }
}
