package io.switchml.bench;

import io.switchml.collectives.Compression;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.PlanJson;
import io.switchml.protocol.DataType;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one benchmark worker does: which job it joins and which all-reduces it times. It travels to
 * worker processes as JSON ({@link #toJson()}, {@link #fromArguments}).
 *
 * @param config     {@code switchml.*} configuration of the worker (controller, job, rank, workers, ...); the
 *                   {@code ring} and {@code ps} workers read only {@code switchml.rank}, {@code switchml.workers}
 *                   and {@code switchml.operationTimeoutMs} from it
 * @param sizes      tensor sizes in bytes, each a multiple of 4
 * @param iterations timed all-reduces per size
 * @param warmup     untimed all-reduces per size before the timed ones
 * @param verify     check the last result of each size against the exact expected value
 * @param type       element type
 * @param seed       seed of the {@link TensorGenerator}
 * @param algorithm  the all-reduce to run
 * @param compression {@code topk} and {@code qsgd}: their settings
 * @param pauseMs    idle time before each timed all-reduce, for measuring what a joined, waiting job costs (0: none)
 * @param sparsity   which of the tensors' rows hold values ({@link TensorGenerator})
 * @param syscalls   count this worker's system calls during the timed all-reduces, and rank 0 those of the processes
 *                   {@code switchPids} (the switch's: an embedded switch is the bench's own process)
 * @param switchPids the switch processes whose system calls rank 0 counts; empty where the bench does not know them
 */
public record WorkerPlan(Map<String, String> config, List<Long> sizes, int iterations, int warmup, boolean verify,
                         DataType type, long seed, AllReduceAlgorithm algorithm, Compression compression, long pauseMs,
                         Sparsity sparsity, boolean syscalls, List<Long> switchPids) {
    /** Without counting system calls. */
    public WorkerPlan(Map<String, String> config, List<Long> sizes, int iterations, int warmup, boolean verify,
                      DataType type, long seed, AllReduceAlgorithm algorithm, Compression compression, long pauseMs,
                      Sparsity sparsity) {
        this(config, sizes, iterations, warmup, verify, type, seed, algorithm, compression, pauseMs, sparsity, false,
                List.of());
    }

    /** Dense tensors. */
    public WorkerPlan(Map<String, String> config, List<Long> sizes, int iterations, int warmup, boolean verify,
                      DataType type, long seed, AllReduceAlgorithm algorithm, Compression compression, long pauseMs) {
        this(config, sizes, iterations, warmup, verify, type, seed, algorithm, compression, pauseMs, Sparsity.DENSE);
    }

    /** Without pauses. */
    public WorkerPlan(Map<String, String> config, List<Long> sizes, int iterations, int warmup, boolean verify,
                      DataType type, long seed, AllReduceAlgorithm algorithm, Compression compression) {
        this(config, sizes, iterations, warmup, verify, type, seed, algorithm, compression, 0);
    }

    /** With the default compression settings. */
    public WorkerPlan(Map<String, String> config, List<Long> sizes, int iterations, int warmup, boolean verify,
                      DataType type, long seed, AllReduceAlgorithm algorithm) {
        this(config, sizes, iterations, warmup, verify, type, seed, algorithm, Compression.DEFAULTS);
    }

    /** A {@code switchml} worker. */
    public WorkerPlan(Map<String, String> config, List<Long> sizes, int iterations, int warmup, boolean verify,
                      DataType type, long seed) {
        this(config, sizes, iterations, warmup, verify, type, seed, AllReduceAlgorithm.switchMl());
    }

    public WorkerPlan {
        config = Map.copyOf(config);
        sizes = List.copyOf(sizes);
        Objects.requireNonNull(algorithm, "algorithm");
        Objects.requireNonNull(compression, "compression");
        for (long s : sizes) {
            if (s < 4 || s % 4 != 0 || s / 4 > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("tensor size " + s + " B must be a positive multiple of 4 bytes below 8 GiB");
            }
        }
        if (iterations < 1 || warmup < 0 || pauseMs < 0) {
            throw new IllegalArgumentException("need at least 1 iteration, and no negative warmup or pause");
        }
        java.util.Objects.requireNonNull(sparsity, "sparsity");
        switchPids = switchPids == null ? List.of() : List.copyOf(switchPids);
    }

    /** The same plan for another rank. */
    public WorkerPlan withConfig(String key, String value) {
        Map<String, String> c = new LinkedHashMap<>(config);
        c.put(key, value);
        return new WorkerPlan(c, sizes, iterations, warmup, verify, type, seed, algorithm, compression, pauseMs, sparsity,
                syscalls, switchPids);
    }

    /** The plan as the one argument of a worker process ({@link PlanJson}). */
    public String toJson() {
        return PlanJson.write(this);
    }

    public static WorkerPlan fromArguments(String[] args) {
        return PlanJson.fromArguments(args, WorkerPlan.class, "benchmark worker");
    }
}
