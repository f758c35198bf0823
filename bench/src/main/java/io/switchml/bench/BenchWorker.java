package io.switchml.bench;

import io.switchml.agent.HostAggregation;
import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;
import io.switchml.client.HostLayout;
import io.switchml.launch.ExactSum;
import io.switchml.launch.HostExactSum;
import io.switchml.launch.WorkerConnection;
import io.switchml.protocol.DataType;

import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One benchmark worker: opens the plan's all-reduce ({@code switchml}: joins the job at the switch;
 * {@code ring}, {@code ps}, {@code topk}, {@code qsgd}: binds its ports, exchanges endpoints through the
 * bench and connects to its peers), and for each size all-reduces a generated tensor (warm-up rounds,
 * then timed rounds, each after a barrier so the workers start together, all on the same buffers: the
 * compression baselines carry their per-tensor state through them), then verifies and reports. {@link #main} is the
 * entry point of the worker processes that {@link BenchRunner} starts; it prints one
 * {@link SizeReport} line per size.
 */
public final class BenchWorker {
    private final WorkerPlan plan;
    private final WorkerConnection.PeerExchange peers;

    /** A worker that exchanges endpoints through its standard output and input, as {@link BenchRunner} expects. */
    public BenchWorker(WorkerPlan plan) {
        this(plan, WorkerConnection.PeerExchange.STANDARD_STREAMS);
    }

    public BenchWorker(WorkerPlan plan, WorkerConnection.PeerExchange peers) {
        this.plan = plan;
        this.peers = peers;
    }

    public static void main(String[] args) {
        try {
            new BenchWorker(WorkerPlan.fromArguments(args)).run(report -> {
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
        TensorGenerator generator = new TensorGenerator(plan.seed(), plan.sparsity());
        try (Session session = open(generator)) {
            for (long bytes : plan.sizes()) {
                reports.accept(measure(session, generator, bytes));
            }
            session.allReduce().barrier(); // nobody leaves while others still run
        }
    }

    /** An open all-reduce and the verifier of its results. */
    private record Session(WorkerConnection connection, ResultVerifier verifier) implements AutoCloseable {
        AllReduce allReduce() {
            return connection.allReduce();
        }

        WorkerConnection.Counters counters() {
            return connection.counters().get();
        }

        @Override
        public void close() {
            connection.close();
        }
    }

    private Session open(TensorGenerator generator) {
        WorkerConnection c = HostAggregation.open(plan.algorithm(), plan.config(), plan.compression(), peers);
        int rounds = plan.warmup() + plan.iterations(); // all-reduces of each size's buffer; the last is verified
        ExactSum.Context context = ExactSum.Context.of(c, plan.compression(), rounds);
        HostLayout hosts = HostAggregation.groupedLayout(plan.algorithm(), plan.config());
        ResultVerifier verifier = hosts == null ? ResultVerifier.of(plan.algorithm(), generator, context)
                : new ResultVerifier(generator, context.workers(), HostExactSum.of(plan.algorithm(), context, hosts));
        return new Session(c, verifier);
    }

    /** The plan's idle time, as a joined job waiting for its next step. */
    private void pause() {
        if (plan.pauseMs() > 0) {
            try {
                Thread.sleep(plan.pauseMs());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new BenchException("interrupted while pausing between all-reduces");
            }
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
        WorkerConnection.Counters before = session.counters();
        long windows = 0; // switchml: bytes sent during the all-reduces only (its barrier is a packet all-reduce too)
        long loopStart = 0;
        long sent;
        boolean machineCpu = allReduce.rank() == 0; // one process reads the whole machine's
        long cpuNanos = machineCpu ? 0 : -1;
        DatagramTally datagrams = new DatagramTally();
        TimedSyscalls syscalls = TimedSyscalls.of(plan, allReduce.rank());
        try (syscalls) {
            syscalls.start();
            for (int i = 0; i < times.length; i++) {
                pause();
                allReduce.barrier();
                long sentBefore = session.counters().bytesSent();
                if (i == 0) {
                    loopStart = sentBefore; // after a barrier: every worker's warm-up traffic is out
                }
                WorkerConnection.Counters countersBefore = session.counters();
                long cpuBefore = machineCpu ? MachineCpu.busyNanos() : -1;
                long t0 = System.nanoTime();
                tensor.allReduce().run();
                times[i] = System.nanoTime() - t0;
                long cpuAfter = machineCpu ? MachineCpu.busyNanos() : -1;
                cpuNanos = cpuBefore < 0 || cpuAfter < 0 || cpuNanos < 0 ? -1 : cpuNanos + (cpuAfter - cpuBefore);
                WorkerConnection.Counters countersAfter = session.counters();
                windows += countersAfter.bytesSent() - sentBefore;
                datagrams.add(countersBefore, countersAfter);
            }
            sent = windows;
            if (!plan.algorithm().needsSwitch()) {
                // The TCP baselines leave out their barriers' bytes themselves; a ps worker's server may still be sending
                // the last results to the other ranks when its own all-reduce returns, and a barrier waits for that.
                allReduce.barrier();
                sent = session.counters().bytesSent() - loopStart;
            }
            syscalls.stop();
        }
        WorkerConnection.Counters after = session.counters();
        Boolean verified = plan.verify() ? tensor.exact().getAsBoolean() : null;
        return new SizeReport(allReduce.rank(), bytes, times, verified, tensor.digest().getAsLong(),
                after.retransmissions() - before.retransmissions(), after.packets() - before.packets(), sent,
                syscalls.worker(), syscalls.switchSide(), cpuNanos, datagrams.total());
    }

    /** A worker's datagrams over the timed all-reduces, summed iteration by iteration (barriers left out). */
    private static final class DatagramTally {
        private long packetsSent;
        private long datagramsSent;
        private long packetsReceived;
        private long datagramsReceived;
        private boolean known = true;

        void add(WorkerConnection.Counters before, WorkerConnection.Counters after) {
            known &= before.datagramsSent() >= 0 && after.datagramsSent() >= 0;
            packetsSent += after.packets() - before.packets();
            datagramsSent += after.datagramsSent() - before.datagramsSent();
            packetsReceived += after.packetsReceived() - before.packetsReceived();
            datagramsReceived += after.datagramsReceived() - before.datagramsReceived();
        }

        /** Null where not known, and where nothing went over UDP (the switch's shared-memory port). */
        SizeReport.Datagrams total() {
            return known && (datagramsSent > 0 || datagramsReceived > 0)
                    ? new SizeReport.Datagrams(packetsSent, datagramsSent, packetsReceived, datagramsReceived) : null;
        }
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
