package io.switchml.agent;

import io.switchml.launch.AllReduceAlgorithm;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * What one agent serves: the job it joins for its host (or its one rank), and where its local processes reach it.
 *
 * @param algorithm        a registered all-reduce algorithm ({@link AllReduceAlgorithm}): {@code switchml}, {@code ring},
 *                         {@code ps}, {@code topk}, {@code qsgd}, ...
 * @param rank             the agent's rank in the job: its host's index where the host's ranks share it
 * @param workers          the job's workers: the hosts, where each host's ranks share one agent
 * @param controller       {@code HOST:PORT} of the switch's controller (algorithms that need a switch only)
 * @param job              the job's name at the switch (algorithms that need a switch only)
 * @param socket           the Unix-domain socket the agent listens on for requests
 * @param sharedMemory     the file the agent creates and maps, where the local process puts its tensors
 * @param sharedMemoryBytes the file's size; every tensor in flight must fit in it
 * @param settings         further {@code switchml.*} worker settings
 * @param connectTimeout   how long the agent waits for the local process to connect
 * @param operationTimeout how long one all-reduce may take before the agent gives up on the job
 * @param idleTimeout      how long the agent waits for the local process's next request before leaving the job
 * @param local            the launch's ranks this agent serves (its host's), and how many there are in all
 */
public record AgentOptions(String algorithm, int rank, int workers, String controller, String job, Path socket,
                           Path sharedMemory, long sharedMemoryBytes, Map<String, String> settings,
                           Duration connectTimeout, Duration operationTimeout, Duration idleTimeout, LocalRanks local) {
    /** A mapped buffer is indexed by int. */
    public static final long MAX_SHARED_MEMORY_BYTES = Integer.MAX_VALUE & ~7L;

    /**
     * The ranks of the launch (PyTorch's) that share this agent, in the order their tensors are summed, and the
     * launch's ranks in all. One rank alone is the agent's rank in a job of one rank per agent.
     */
    public record LocalRanks(List<Integer> ranks, int launchRanks) {
        public LocalRanks {
            ranks = List.copyOf(ranks);
            if (ranks.isEmpty() || new HashSet<>(ranks).size() != ranks.size()
                    || ranks.stream().anyMatch(r -> r < 0 || r >= launchRanks)) {
                throw new IllegalArgumentException("local ranks " + ranks + " are not distinct ranks in 0.." + (launchRanks - 1));
            }
        }

        /** One rank per agent: the job's rank and workers are the launch's. */
        public static LocalRanks alone(int rank, int workers) {
            return new LocalRanks(List.of(rank), workers);
        }

        int count() {
            return ranks.size();
        }

        /** Whether the job's MEAN is the launch's: every host has one rank, so the job has the launch's ranks. */
        boolean meanIsTheJobs(int workers) {
            return launchRanks == workers;
        }
    }

    /** An agent of one rank. */
    public AgentOptions(String algorithm, int rank, int workers, String controller, String job, Path socket,
                        Path sharedMemory, long sharedMemoryBytes, Map<String, String> settings,
                        Duration connectTimeout, Duration operationTimeout, Duration idleTimeout) {
        this(algorithm, rank, workers, controller, job, socket, sharedMemory, sharedMemoryBytes, settings, connectTimeout,
                operationTimeout, idleTimeout, LocalRanks.alone(rank, workers));
    }

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
        if (local.launchRanks() < workers) {
            throw new IllegalArgumentException("the launch's " + local.launchRanks() + " ranks cannot make a job of " + workers + " workers");
        }
        settings = Map.copyOf(settings);
    }
}
