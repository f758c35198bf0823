package io.switchml.bench;

import io.switchml.client.ReduceOp;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.client.WorkerStatistics;
import io.switchml.protocol.DataType;

import java.util.Properties;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Consumer;

/**
 * One benchmark worker: joins the job, and for each size all-reduces a generated tensor
 * (warm-up rounds, then timed rounds, each after a barrier so the workers start together),
 * then verifies and reports. {@link #main} is the entry point of the worker processes that
 * {@link BenchRunner} starts; it prints one {@link SizeReport} line per size.
 */
public final class BenchWorker {
    private final WorkerPlan plan;

    public BenchWorker(WorkerPlan plan) {
        this.plan = plan;
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
        Properties props = new Properties();
        props.putAll(plan.config());
        SwitchMLConfig config = SwitchMLConfig.builder().properties(props).build();
        TensorGenerator generator = new TensorGenerator(plan.seed());
        try (SwitchMLContext context = SwitchMLContext.connect(config)) {
            ResultVerifier verifier = new ResultVerifier(generator, config.workers(), config.elementsPerPacket());
            for (long bytes : plan.sizes()) {
                reports.accept(measure(context, generator, verifier, bytes));
            }
            context.barrier(); // nobody leaves while others still run
        }
    }

    private SizeReport measure(SwitchMLContext context, TensorGenerator generator, ResultVerifier verifier, long bytes) {
        int length = (int) (bytes / 4);
        Tensor tensor = plan.type() == DataType.FLOAT32
                ? floatTensor(context, generator, verifier, length) : intTensor(context, generator, verifier, length);
        for (int i = 0; i < plan.warmup(); i++) {
            context.barrier();
            tensor.allReduce().run();
        }
        long[] times = new long[plan.iterations()];
        WorkerStatistics.Snapshot before = context.statistics().snapshot();
        for (int i = 0; i < times.length; i++) {
            context.barrier();
            long t0 = System.nanoTime();
            tensor.allReduce().run();
            times[i] = System.nanoTime() - t0;
        }
        WorkerStatistics.Snapshot after = context.statistics().snapshot();
        Boolean verified = plan.verify() ? tensor.exact().getAsBoolean() : null;
        return new SizeReport(context.rank(), bytes, times, verified, tensor.digest().getAsLong(),
                after.retransmissions() - before.retransmissions(), after.packetsSent() - before.packetsSent());
    }

    /** A generated input and its output buffer, of either element type. */
    private record Tensor(Runnable allReduce, BooleanSupplier exact, LongSupplier digest) {
    }

    private static Tensor floatTensor(SwitchMLContext context, TensorGenerator generator, ResultVerifier verifier,
                                      int length) {
        float[] in = new float[length];
        float[] out = new float[length];
        generator.fill(context.rank(), in, 0, length);
        return new Tensor(() -> context.allReduce(in, out, ReduceOp.SUM),
                () -> verifier.firstMismatch(out, length) < 0, () -> ResultVerifier.digest(out, length));
    }

    private static Tensor intTensor(SwitchMLContext context, TensorGenerator generator, ResultVerifier verifier,
                                    int length) {
        int[] in = new int[length];
        int[] out = new int[length];
        generator.fill(context.rank(), in, 0, length);
        return new Tensor(() -> context.allReduce(in, out, ReduceOp.SUM),
                () -> verifier.firstMismatch(out, length) < 0, () -> ResultVerifier.digest(out, length));
    }
}
