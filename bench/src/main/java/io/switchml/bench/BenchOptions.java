package io.switchml.bench;

import io.switchml.collectives.Compression;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.Rack;
import io.switchml.protocol.DataType;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A benchmark run: algorithms, worker counts and sizes to sweep, how to measure, and where the switch is.
 *
 * @param controller    host:port of a running switch's controller, or null to start an embedded one
 * @param workerConfig  extra {@code switchml.*} settings for every worker (packet size, window, threads)
 * @param switchPorts   UDP ports of the embedded switch (one receive thread each)
 * @param workerTimeout how long a worker process may run before the bench gives up on it
 * @param dropProbability probability that the embedded switch's drop simulator drops each packet on arrival and
 *                      each result on departure (0: off); only with the embedded switch
 * @param algorithms    the algorithms to measure, each with the same worker counts, sizes and tensors; the switch
 *                      (controller, embedded switch, drops, worker settings) concerns {@code switchml} only
 * @param rack          run in the emulated rack ({@link Rack}, needs root): the switch and every worker in their own
 *                      network namespaces behind shaped links; null runs everything on this host's loopback. Its
 *                      worker count must cover the largest of {@code workers}
 * @param compression   the settings of {@code topk} and {@code qsgd}
 * @param switchHosts   on loopback: 0 or 1 for one embedded switch, K >= 2 for K embedded switches that one job is
 *                      sharded over ({@code switchml.shards}); in the rack, {@code rack.switchHosts()} says it
 * @param sparsity      which of the tensors' rows hold values, the same for every algorithm ({@link TensorGenerator})
 * @param syscalls      count each worker's and the switch's system calls during the timed all-reduces
 *                      ({@link SyscallCounter}: needs perf); rows then say them per all-reduce
 */
public record BenchOptions(List<Integer> workers, List<Long> sizes, int iterations, int warmup, boolean verify,
                           DataType type, String controller, Map<String, String> workerConfig, int switchPorts,
                           long seed, Duration workerTimeout, double dropProbability, List<AllReduceAlgorithm> algorithms,
                           Rack.Spec rack, Compression compression, int switchHosts, Sparsity sparsity,
                           boolean syscalls) {
    /** Without counting system calls. */
    public BenchOptions(List<Integer> workers, List<Long> sizes, int iterations, int warmup, boolean verify,
                        DataType type, String controller, Map<String, String> workerConfig, int switchPorts,
                        long seed, Duration workerTimeout, double dropProbability, List<AllReduceAlgorithm> algorithms,
                        Rack.Spec rack, Compression compression, int switchHosts, Sparsity sparsity) {
        this(workers, sizes, iterations, warmup, verify, type, controller, workerConfig, switchPorts, seed, workerTimeout,
                dropProbability, algorithms, rack, compression, switchHosts, sparsity, false);
    }

    /** Dense tensors. */
    public BenchOptions(List<Integer> workers, List<Long> sizes, int iterations, int warmup, boolean verify,
                        DataType type, String controller, Map<String, String> workerConfig, int switchPorts,
                        long seed, Duration workerTimeout, double dropProbability, List<AllReduceAlgorithm> algorithms,
                        Rack.Spec rack, Compression compression, int switchHosts) {
        this(workers, sizes, iterations, warmup, verify, type, controller, workerConfig, switchPorts, seed, workerTimeout,
                dropProbability, algorithms, rack, compression, switchHosts, Sparsity.DENSE);
    }

    /** Without shards on loopback. */
    public BenchOptions(List<Integer> workers, List<Long> sizes, int iterations, int warmup, boolean verify,
                        DataType type, String controller, Map<String, String> workerConfig, int switchPorts,
                        long seed, Duration workerTimeout, double dropProbability, List<AllReduceAlgorithm> algorithms,
                        Rack.Spec rack, Compression compression) {
        this(workers, sizes, iterations, warmup, verify, type, controller, workerConfig, switchPorts, seed, workerTimeout,
                dropProbability, algorithms, rack, compression, 0);
    }

    /** With the default compression settings. */
    public BenchOptions(List<Integer> workers, List<Long> sizes, int iterations, int warmup, boolean verify,
                        DataType type, String controller, Map<String, String> workerConfig, int switchPorts,
                        long seed, Duration workerTimeout, double dropProbability, List<AllReduceAlgorithm> algorithms,
                        Rack.Spec rack) {
        this(workers, sizes, iterations, warmup, verify, type, controller, workerConfig, switchPorts, seed, workerTimeout,
                dropProbability, algorithms, rack, Compression.DEFAULTS);
    }

    /** On this host, without the rack. */
    public BenchOptions(List<Integer> workers, List<Long> sizes, int iterations, int warmup, boolean verify,
                        DataType type, String controller, Map<String, String> workerConfig, int switchPorts,
                        long seed, Duration workerTimeout, double dropProbability, List<AllReduceAlgorithm> algorithms) {
        this(workers, sizes, iterations, warmup, verify, type, controller, workerConfig, switchPorts, seed, workerTimeout,
                dropProbability, algorithms, null);
    }

    /** Only {@code switchml}. */
    public BenchOptions(List<Integer> workers, List<Long> sizes, int iterations, int warmup, boolean verify,
                        DataType type, String controller, Map<String, String> workerConfig, int switchPorts,
                        long seed, Duration workerTimeout, double dropProbability) {
        this(workers, sizes, iterations, warmup, verify, type, controller, workerConfig, switchPorts, seed, workerTimeout,
                dropProbability, List.of(AllReduceAlgorithm.switchMl()));
    }

    /** Only {@code switchml}, without switch drops. */
    public BenchOptions(List<Integer> workers, List<Long> sizes, int iterations, int warmup, boolean verify,
                        DataType type, String controller, Map<String, String> workerConfig, int switchPorts,
                        long seed, Duration workerTimeout) {
        this(workers, sizes, iterations, warmup, verify, type, controller, workerConfig, switchPorts, seed, workerTimeout, 0);
    }

    /** The most switches a loopback bench shards a job over. */
    public static final int MAX_SWITCH_HOSTS = 16;

    public BenchOptions {
        workers = List.copyOf(workers);
        sizes = List.copyOf(sizes);
        workerConfig = Map.copyOf(workerConfig);
        algorithms = List.copyOf(algorithms);
        java.util.Objects.requireNonNull(compression, "compression");
        if (workers.isEmpty() || sizes.isEmpty() || algorithms.isEmpty()) {
            throw new IllegalArgumentException("give at least one algorithm, one worker count and one size");
        }
        if (algorithms.stream().map(AllReduceAlgorithm::id).distinct().count() != algorithms.size()) {
            throw new IllegalArgumentException("an algorithm is listed twice: " + algorithms);
        }
        for (int n : workers) {
            if (n < 1 || n > 64) {
                throw new IllegalArgumentException("a local benchmark runs 1..64 worker processes, not " + n);
            }
        }
        if (!(dropProbability >= 0 && dropProbability <= 1)) {
            throw new IllegalArgumentException("the switch drop probability must be in [0, 1], not " + dropProbability);
        }
        java.util.Objects.requireNonNull(sparsity, "sparsity");
        if (switchHosts < 0 || switchHosts > MAX_SWITCH_HOSTS) {
            throw new IllegalArgumentException("--switch-hosts must be in 1.." + MAX_SWITCH_HOSTS + ", not " + switchHosts);
        }
        if (switchHosts > 1 && controller != null) {
            throw new IllegalArgumentException("--switch-hosts starts its own " + switchHosts + " switches; it cannot use"
                    + " a running one (--controller)");
        }
        if (rack != null && switchHosts != 0 && switchHosts != rack.switchHosts()) {
            throw new IllegalArgumentException("the rack has " + rack.switchHosts() + " switch hosts, not " + switchHosts);
        }
        if (dropProbability > 0 && controller != null) {
            throw new IllegalArgumentException("switch drops need the embedded switch; start the running switch with"
                    + " --ingress-drop and --egress-drop instead");
        }
        if (rack != null) {
            if (controller != null) {
                throw new IllegalArgumentException("the rack starts its own switch in its switch namespace; drop --controller");
            }
            if (dropProbability > 0) {
                throw new IllegalArgumentException("in the rack, drops are the rack's nftables drops (Rack.Spec), not the"
                        + " embedded switch's");
            }
            int most = workers.stream().mapToInt(Integer::intValue).max().orElse(0);
            if (rack.workers() < most) {
                throw new IllegalArgumentException("the rack has " + rack.workers() + " worker namespaces but the bench"
                        + " runs up to " + most + " workers");
            }
        }
    }
}
