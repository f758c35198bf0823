package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.control.ControllerAddress;
import io.switchml.control.ControllerCredentials;
import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import io.switchml.controller.LeafRole;
import io.switchml.dataplane.SwitchConfig;
import io.switchml.protocol.LeafRanks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * An embedded switch on loopback (ephemeral ports) and n worker contexts of one job in this JVM. The
 * workers use UDP unless a test asks for the shared-memory port ({@code transport}), so that the
 * tests of loss, faults and the wire keep exercising the network path.
 */
final class LocalCluster implements AutoCloseable {
    final AggregationService service;
    final List<SwitchMLContext> contexts = new ArrayList<>();
    /** In a two-level hierarchy (docs/ARCHITECTURE.md section 9), the leaves, and {@link #service} is the spine. */
    final List<AggregationService> leaves = new ArrayList<>();
    /** Whether this cluster started the switch (and closes it). */
    private final boolean ownsService;

    LocalCluster(int workers, int switchPorts, UnaryOperator<SwitchMLConfig.Builder> configure) {
        this(AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0).portCount(switchPorts)
                        .allowFaultInjection(true),
                "127.0.0.1", 0), true, "test-" + System.nanoTime(), workers, configure);
    }

    /** The workers of job {@code job} on a switch that someone else started and closes; several jobs can share it. */
    static LocalCluster onSwitch(AggregationService service, String job, int workers,
                                 UnaryOperator<SwitchMLConfig.Builder> configure) {
        return new LocalCluster(service, false, job, workers, configure);
    }

    private LocalCluster(AggregationService service, boolean ownsService, String job, int workers,
                         UnaryOperator<SwitchMLConfig.Builder> configure) {
        this(service, List.of(), ownsService, job, workers, configure);
    }

    /**
     * A spine and {@code leafCount} leaves on loopback, each with its own ports, and n worker contexts,
     * rank r's at the leaf that serves it.
     */
    static LocalCluster hierarchy(int leafCount, int workers, int switchPorts, UnaryOperator<SwitchMLConfig.Builder> configure) {
        return hierarchy(leafCount, workers, switchPorts, new ControllerSecurity(), ControllerCredentials.NONE, configure);
    }

    /** The same under a spine with {@code spineSecurity}, which the leaves call with {@code leafCredentials}. */
    static LocalCluster hierarchy(int leafCount, int workers, int switchPorts, ControllerSecurity spineSecurity,
                                  ControllerCredentials leafCredentials, UnaryOperator<SwitchMLConfig.Builder> configure) {
        AggregationService spine = startSwitch(switchPorts, null, spineSecurity);
        List<AggregationService> leaves = new ArrayList<>();
        try {
            for (int i = 0; i < leafCount; i++) {
                leaves.add(startSwitch(switchPorts, new LeafRole(new ControllerAddress("127.0.0.1", spine.controllerPort()),
                        i, leafCount, null, leafCredentials), new ControllerSecurity()));
            }
            return new LocalCluster(spine, leaves, true, "tree-" + System.nanoTime(), workers, configure);
        } catch (RuntimeException e) {
            leaves.forEach(AggregationService::close);
            spine.close();
            throw e;
        }
    }

    /** Another job's workers on the spine and leaves of {@code tree}, which keeps them (and closes them). */
    static LocalCluster onHierarchy(LocalCluster tree, String job, int workers, UnaryOperator<SwitchMLConfig.Builder> configure) {
        return new LocalCluster(tree.service, tree.leaves, false, job, workers, configure);
    }

    private static AggregationService startSwitch(int switchPorts, LeafRole leaf, ControllerSecurity security) {
        return AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0).portCount(switchPorts)
                .allowFaultInjection(true), "127.0.0.1", 0, security, leaf);
    }

    private LocalCluster(AggregationService service, List<AggregationService> leaves, boolean ownsService, String job,
                         int workers, UnaryOperator<SwitchMLConfig.Builder> configure) {
        this.service = service;
        this.leaves.addAll(leaves);
        this.ownsService = ownsService;
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        try {
            List<CompletableFuture<SwitchMLContext>> joining = new ArrayList<>();
            for (int r = 0; r < workers; r++) {
                AggregationService controller = leaves.isEmpty() ? service
                        : leaves.get(LeafRanks.leafOf(r, leaves.size(), workers));
                SwitchMLConfig config = configure.apply(SwitchMLConfig.builder()
                        .controller("127.0.0.1:" + controller.controllerPort()).job(job).rank(r).workers(workers)
                        .joinTimeout(java.time.Duration.ofSeconds(30)).transport(SwitchMLConfig.Transport.UDP)
                        .elementsPerPacket(TestDefaults.ELEMENTS_PER_PACKET).slotsPerThread(TestDefaults.SLOTS_PER_THREAD)).build();
                joining.add(CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(config), pool));
            }
            for (CompletableFuture<SwitchMLContext> f : joining) {
                contexts.add(f.join());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        } finally {
            pool.shutdown();
        }
    }

    LocalCluster(int workers) {
        this(workers, 1, b -> b);
    }

    /** Runs {@code body(rank, context)} on every worker at once and waits for all. */
    <T> List<T> onEveryWorker(WorkerBody<T> body) {
        ExecutorService pool = Executors.newFixedThreadPool(contexts.size());
        try {
            List<CompletableFuture<T>> futures = new ArrayList<>();
            for (int r = 0; r < contexts.size(); r++) {
                int rank = r;
                futures.add(CompletableFuture.supplyAsync(() -> body.run(rank, contexts.get(rank)), pool));
            }
            List<T> results = new ArrayList<>();
            for (CompletableFuture<T> f : futures) {
                results.add(f.join());
            }
            return results;
        } finally {
            pool.shutdownNow();
            try {
                pool.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Every rank all-reduces its row of {@code inputs} into a fresh output (NaN until written, so that an
     * element the all-reduce leaves unwritten shows) at once; the outputs, by rank.
     */
    List<float[]> allReduce(float[][] inputs, ReduceOp op) {
        int length = inputs[0].length;
        return onEveryWorker((rank, ctx) -> {
            float[] out = new float[length];
            Arrays.fill(out, Float.NaN);
            ctx.allReduce(inputs[rank], out, op);
            return out;
        });
    }

    /** UDP payload bytes all workers sent so far. */
    long bytesSent() {
        return contexts.stream().mapToLong(c -> c.statistics().snapshot().bytesSent()).sum();
    }

    /** Every worker's statistics now, in rank order. */
    List<WorkerStatistics.Snapshot> snapshots() {
        return contexts.stream().map(c -> c.statistics().snapshot()).toList();
    }

    /**
     * UDP payload bytes all workers sent between two {@link #snapshots()} in first transmissions: each worker's bytes
     * less its retransmissions' share of them, exact when that worker's packets in between were of one size (a
     * tensor of whole packets), so the figure does not depend on when timeouts fired.
     */
    static double bytesSentOnce(List<WorkerStatistics.Snapshot> before, List<WorkerStatistics.Snapshot> after) {
        double total = 0;
        for (int r = 0; r < after.size(); r++) {
            WorkerStatistics.Snapshot a = after.get(r);
            WorkerStatistics.Snapshot b = before.get(r);
            long packets = a.packetsSent() - b.packetsSent();
            if (packets > 0) {
                long first = packets - (a.retransmissions() - b.retransmissions());
                total += (double) (a.bytesSent() - b.bytesSent()) * first / packets;
            }
        }
        return total;
    }

    interface WorkerBody<T> {
        T run(int rank, SwitchMLContext context);
    }

    /** Packets sent, retransmissions, timeouts, injected drops, duplicates, delays, over every worker. */
    long[] statisticsTotals() {
        long[] t = new long[6];
        for (SwitchMLContext c : contexts) {
            WorkerStatistics.Snapshot s = c.statistics().snapshot();
            t[0] += s.packetsSent();
            t[1] += s.retransmissions();
            t[2] += s.retransmissionTimeouts();
            t[3] += s.injectedDrops();
            t[4] += s.injectedDuplicates();
            t[5] += s.injectedDelays();
        }
        return t;
    }

    @Override
    public void close() {
        for (SwitchMLContext c : contexts) {
            c.close();
        }
        if (ownsService) {
            leaves.forEach(AggregationService::close);
            service.close();
        }
    }
}
