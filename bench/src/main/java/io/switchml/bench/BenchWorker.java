package io.switchml.bench;

import io.switchml.client.AllReduce;
import io.switchml.client.ReduceOp;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.client.WorkerStatistics;
import io.switchml.collectives.CollectiveConfig;
import io.switchml.collectives.Collectives;
import io.switchml.collectives.Listener;
import io.switchml.protocol.DataType;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One benchmark worker: opens the plan's all-reduce ({@code switchml}: joins the job at the switch;
 * {@code ring}, {@code ps}: binds its ports, exchanges endpoints through the bench and connects to its
 * peers), and for each size all-reduces a generated tensor (warm-up rounds, then timed rounds, each
 * after a barrier so the workers start together), then verifies and reports. {@link #main} is the
 * entry point of the worker processes that {@link BenchRunner} starts; it prints one
 * {@link SizeReport} line per size.
 */
public final class BenchWorker {
    /**
     * Where {@code ring} and {@code ps} workers listen unless {@code switchml.localAddress} names an address (the
     * rack: the worker's namespace address, so the baselines cross the same shaped links as {@code switchml}).
     */
    static final String LOCAL_HOST = "127.0.0.1";

    /** How a {@code ring} or {@code ps} worker tells the bench its endpoints and learns every rank's. */
    @FunctionalInterface
    public interface PeerExchange {
        PeerEndpoints exchange(PeerEndpoints.Endpoint mine);
    }

    private final WorkerPlan plan;
    private final PeerExchange peers;

    /** A worker that exchanges endpoints through its standard output and input, as {@link BenchRunner} expects. */
    public BenchWorker(WorkerPlan plan) {
        this(plan, BenchWorker::exchangeThroughStandardStreams);
    }

    public BenchWorker(WorkerPlan plan, PeerExchange peers) {
        this.plan = plan;
        this.peers = peers;
    }

    public static void main(String[] args) {
        try {
            new BenchWorker(WorkerPlan.parse(args)).run(report -> {
                System.out.println(report.toLine());
                System.out.flush();
            });
            System.exit(0);
        } catch (RuntimeException e) {
            System.err.println("worker failed: " + e.getMessage());
            System.exit(1);
        }
    }

    public void run(Consumer<SizeReport> reports) {
        TensorGenerator generator = new TensorGenerator(plan.seed());
        try (Session session = plan.algorithm().needsSwitch() ? openSwitchMl(generator) : openCollective(generator)) {
            for (long bytes : plan.sizes()) {
                reports.accept(measure(session, generator, bytes));
            }
            session.allReduce().barrier(); // nobody leaves while others still run
        }
    }

    /** An open all-reduce, the verifier of its results and its packet counters (zero where it has none). */
    private record Session(AllReduce allReduce, ResultVerifier verifier, Supplier<Counters> counters)
            implements AutoCloseable {
        @Override
        public void close() {
            allReduce.close();
        }
    }

    private record Counters(long retransmissions, long packets) {
        static final Counters NONE = new Counters(0, 0);
    }

    private Session openSwitchMl(TensorGenerator generator) {
        Properties props = new Properties();
        props.putAll(plan.config());
        SwitchMLConfig config = SwitchMLConfig.builder().properties(props).build();
        SwitchMLContext context = SwitchMLContext.connect(config);
        return new Session(context, ResultVerifier.switchMl(generator, config.workers(), config.elementsPerPacket()), () -> {
            WorkerStatistics.Snapshot s = context.statistics().snapshot();
            return new Counters(s.retransmissions(), s.packetsSent());
        });
    }

    /**
     * Binds this rank's listener (and, for {@code ps}, its in-process parameter server's: one server per worker
     * host) on ephemeral ports, exchanges endpoints, and connects. TCP retransmits below the algorithm, which
     * itself never resends: its counters are zero.
     */
    private Session openCollective(TensorGenerator generator) {
        int rank = intSetting(SwitchMLConfig.Key.RANK);
        int workers = intSetting(SwitchMLConfig.Key.WORKERS);
        boolean ps = plan.algorithm() == BenchAlgorithm.PS;
        String local = plan.config().get(SwitchMLConfig.Key.LOCAL_ADDRESS.property());
        InetSocketAddress ephemeral = new InetSocketAddress(local == null || local.isBlank() ? LOCAL_HOST : local.trim(), 0);
        Listener worker = Listener.bind(ephemeral);
        Listener server = null;
        try {
            server = ps ? Listener.bind(ephemeral) : null;
            PeerEndpoints all = peers.exchange(new PeerEndpoints.Endpoint(rank, worker.address(),
                    server == null ? null : server.address()));
            CollectiveConfig.Builder config = CollectiveConfig.builder().algorithm(plan.algorithm().id()).rank(rank)
                    .workers(workers).endpoints(all.workers()).servers(all.servers()).serversInWorkers(true);
            String timeout = plan.config().get(SwitchMLConfig.Key.OPERATION_TIMEOUT_MS.property());
            if (timeout != null) {
                config.operationTimeout(Duration.ofMillis(Long.parseLong(timeout.trim())));
            }
            AllReduce allReduce = Collectives.open(config.build(), worker, server);
            return new Session(allReduce, ps ? ResultVerifier.parameterServer(generator, workers)
                    : ResultVerifier.ring(generator, workers), () -> Counters.NONE);
        } catch (RuntimeException e) {
            worker.close();
            if (server != null) {
                server.close();
            }
            throw e;
        }
    }

    private int intSetting(SwitchMLConfig.Key key) {
        String value = plan.config().get(key.property());
        if (value == null) {
            throw new IllegalArgumentException(key.property() + " is required");
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key.property() + " = '" + value + "' is not a number", e);
        }
    }

    private static PeerEndpoints exchangeThroughStandardStreams(PeerEndpoints.Endpoint mine) {
        System.out.println(mine.toLine());
        System.out.flush();
        try {
            // Not closed: closing it would close System.in, and the bench closes its end after this one line.
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            return PeerEndpoints.parse(in.readLine());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the peers' endpoints from standard input: " + e.getMessage(), e);
        }
    }

    private SizeReport measure(Session session, TensorGenerator generator, long bytes) {
        AllReduce allReduce = session.allReduce();
        int length = (int) (bytes / 4);
        Tensor tensor = plan.type() == DataType.FLOAT32
                ? floatTensor(allReduce, generator, session.verifier(), length)
                : intTensor(allReduce, generator, session.verifier(), length);
        for (int i = 0; i < plan.warmup(); i++) {
            allReduce.barrier();
            tensor.allReduce().run();
        }
        long[] times = new long[plan.iterations()];
        Counters before = session.counters().get();
        for (int i = 0; i < times.length; i++) {
            allReduce.barrier();
            long t0 = System.nanoTime();
            tensor.allReduce().run();
            times[i] = System.nanoTime() - t0;
        }
        Counters after = session.counters().get();
        Boolean verified = plan.verify() ? tensor.exact().getAsBoolean() : null;
        return new SizeReport(allReduce.rank(), bytes, times, verified, tensor.digest().getAsLong(),
                after.retransmissions() - before.retransmissions(), after.packets() - before.packets());
    }

    /** A generated input and its output buffer, of either element type. */
    private record Tensor(Runnable allReduce, BooleanSupplier exact, LongSupplier digest) {
    }

    private static Tensor floatTensor(AllReduce allReduce, TensorGenerator generator, ResultVerifier verifier, int length) {
        float[] in = new float[length];
        float[] out = new float[length];
        generator.fill(allReduce.rank(), in, 0, length);
        return new Tensor(() -> allReduce.allReduce(in, out, ReduceOp.SUM),
                () -> verifier.firstMismatch(out, length) < 0, () -> ResultVerifier.digest(out, length));
    }

    private static Tensor intTensor(AllReduce allReduce, TensorGenerator generator, ResultVerifier verifier, int length) {
        int[] in = new int[length];
        int[] out = new int[length];
        generator.fill(allReduce.rank(), in, 0, length);
        return new Tensor(() -> allReduce.allReduce(in, out, ReduceOp.SUM),
                () -> verifier.firstMismatch(out, length) < 0, () -> ResultVerifier.digest(out, length));
    }
}
