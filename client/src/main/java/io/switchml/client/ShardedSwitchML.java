package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;
import io.switchml.api.Tensors;
import io.switchml.control.ControllerAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * One switch made of k hosts (docs/ARCHITECTURE.md section 10): the worker joins the job at every shard's
 * controller under the job's one name, as a {@link SwitchMLContext} per shard, and each all-reduce is cut into k
 * contiguous parts of whole blocks, shard j's in proportion to its worker threads (thread t of the worker goes to
 * shard t mod k). Each shard's link then carries n x S/k each way and each worker's S: with k = n every link
 * carries S, the in-network bound.
 *
 * <p>Blocks start at multiples of the packet size from the tensor's start whatever the cut, so results are
 * bit-identical to one switch's ({@link io.switchml.api.ReferenceAllReduce} predicts them). Every shard keeps its
 * own liveness and failover: a shard with standbys ({@code host:port,standby:port} in {@code switchml.shards})
 * moves to its next standby on its own and redoes only its own unfinished blocks, while the other shards go on.
 * An all-reduce fails as soon as one of its parts fails, with that part's exception.
 */
public final class ShardedSwitchML implements SwitchMLConnection {
    private static final Logger LOG = LoggerFactory.getLogger(ShardedSwitchML.class);

    private final SwitchMLConfig config;
    private final WorkerStatistics statistics;
    private final List<SwitchMLContext> shards;
    /** Worker threads before shard j, and in all: shard j carries the share [threadsBefore[j], threadsBefore[j+1]) / total. */
    private final int[] threadsBefore;

    private ShardedSwitchML(SwitchMLConfig config, WorkerStatistics statistics, List<SwitchMLContext> shards,
                            int[] threadsBefore) {
        this.config = config;
        this.statistics = statistics;
        this.shards = shards;
        this.threadsBefore = threadsBefore;
    }

    /**
     * Joins the job at every shard of {@code config.shards()}, in shard order (the same on every worker, so the
     * joins cannot wait on each other); returns once every worker has joined every shard.
     */
    public static ShardedSwitchML connect(SwitchMLConfig config) {
        List<List<ControllerAddress>> addresses = config.shards();
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException(SwitchMLConfig.Key.SHARDS.property()
                    + " is empty: a single switch is joined with SwitchMLContext.connect");
        }
        int k = addresses.size();
        int total = Math.max(config.threads(), k);
        int[] threadsBefore = new int[k + 1];
        for (int j = 0; j < k; j++) {
            threadsBefore[j + 1] = threadsBefore[j] + threadsOf(j, k, total);
        }
        // Every shard must cut blocks alike: the packet size and window are chosen once, from the path to shard 0.
        SwitchMLConfig sized = PathSizing.resolve(shardConfig(config, addresses.get(0), threadsOf(0, k, total)));
        SwitchMLConfig resolved = config.toBuilder().elementsPerPacket(sized.elementsPerPacket())
                .slotsPerThread(sized.slotsPerThread()).build();
        WorkerStatistics statistics = new WorkerStatistics();
        List<SwitchMLContext> joined = new ArrayList<>();
        try {
            for (int j = 0; j < k; j++) {
                joined.add(SwitchMLContext.connect(shardConfig(resolved, addresses.get(j), threadsOf(j, k, total)),
                        statistics));
            }
        } catch (RuntimeException e) {
            for (SwitchMLContext shard : joined) {
                closeQuietly(shard, e);
            }
            throw e;
        }
        LOG.info("rank {} of {} joined job '{}' at {} shards ({} worker threads)", config.rank(), config.workers(),
                config.job(), k, total);
        return new ShardedSwitchML(resolved, statistics, List.copyOf(joined), threadsBefore);
    }

    /** The worker threads t in [0, total) with t mod k = j. */
    static int threadsOf(int j, int k, int total) {
        return (total - j + k - 1) / k;
    }

    /** Shard j's configuration: its controllers, its threads, no shards of its own. */
    private static SwitchMLConfig shardConfig(SwitchMLConfig config, List<ControllerAddress> controllers, int threads) {
        String list = controllers.stream().map(ControllerAddress::toString).collect(Collectors.joining(","));
        return config.toBuilder().shards("").controller(controllers.get(0).toString()).controllers(list)
                .threads(threads).build();
    }


    /** The number of shards. */
    public int shardCount() {
        return shards.size();
    }

    @Override
    public SwitchMLConfig config() {
        return config;
    }

    /** The counters of all shards together. */
    @Override
    public WorkerStatistics statistics() {
        return statistics;
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(FloatBuffer in, FloatBuffer out, ReduceOp op) {
        Tensors.checkOutput(in.remaining(), out.remaining());
        return submit(in.remaining(), (shard, from, length) -> shard.allReduceAsync(
                in.slice(in.position() + from, length), out.slice(out.position() + from, length), op));
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(IntBuffer in, IntBuffer out, ReduceOp op) {
        Tensors.checkOutput(in.remaining(), out.remaining());
        return submit(in.remaining(), (shard, from, length) -> shard.allReduceAsync(
                in.slice(in.position() + from, length), out.slice(out.position() + from, length), op));
    }

    /** Submits one shard's part of an all-reduce: elements [from, from + length) of the tensor. */
    @FunctionalInterface
    private interface PartSender {
        CompletableFuture<Void> send(SwitchMLContext shard, int from, int length);
    }

    private record Part(SwitchMLContext shard, int from, int length) {
    }

    /*
     * Synchronized: every shard sees this worker's all-reduces in one order, as every other worker's shards do.
     * A shard whose part is empty gets nothing (every worker cuts the same length alike).
     */
    private synchronized CompletableFuture<Void> submit(int length, PartSender send) {
        if (length == 0) {
            return send.send(shards.get(0), 0, 0);
        }
        int k = config.elementsPerPacket();
        long blocks = (length + (long) k - 1) / k;
        int total = threadsBefore[shards.size()];
        List<Part> parts = new ArrayList<>();
        for (int j = 0; j < shards.size(); j++) {
            int from = (int) Math.min(length, blocks * threadsBefore[j] / total * k);
            int to = (int) Math.min(length, blocks * threadsBefore[j + 1] / total * k);
            if (to > from) {
                parts.add(new Part(shards.get(j), from, to - from));
            }
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        AtomicInteger remaining = new AtomicInteger(parts.size());
        for (Part part : parts) {
            send.send(part.shard(), part.from(), part.length()).whenComplete((v, e) -> {
                if (e != null) {
                    result.completeExceptionally(e instanceof CompletionException && e.getCause() != null ? e.getCause() : e);
                } else if (remaining.decrementAndGet() == 0) {
                    result.complete(null);
                }
            });
        }
        return result;
    }

    /**
     * A one-element all-reduce through shard 0 ({@link SwitchMLContext#barrier()}): every worker has reached it
     * once it completes; the all-reduces before it on other shards complete on their own.
     */
    @Override
    public void barrier() {
        shards.get(0).barrier();
    }

    /** Through shard 0's controller. */
    @Override
    public byte[] broadcast(byte[] value, int root) {
        return shards.get(0).broadcast(value, root);
    }

    /** Leaves the job at every shard. */
    @Override
    public void close() {
        RuntimeException first = null;
        for (SwitchMLContext shard : shards) {
            try {
                shard.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first instanceof SwitchMLException s ? s : new SwitchMLException("leaving a shard failed", first);
        }
    }

    private static void closeQuietly(SwitchMLContext shard, RuntimeException cause) {
        try {
            shard.close();
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }
}
