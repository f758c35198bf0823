package io.switchml.jmh;

import io.switchml.api.ReduceOp;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.FloatBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Steady-state all-reduces of a float32 tensor through an embedded switch and in-process workers
 * on loopback, with the default settings (2048 elements per packet, window 64). Meant to be run
 * with {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes allocated per all-reduce by the
 * whole JVM (workers, switch and controller threads), and the target is that it does not grow
 * with the tensor. The time per operation is incidental: on loopback it measures CPU contention.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class AllReduceAllocationBenchmark {
    static final int WORKERS = 2;

    /** 1 MiB and 16 MiB of float32. */
    @Param({"1048576", "16777216"})
    int tensorBytes;

    EmbeddedCluster cluster;
    FloatBuffer[] inputs;
    FloatBuffer[] outputs;
    /** Reused, so the benchmark itself allocates nothing per operation but what the library does. */
    final CompletableFuture<?>[] pending = new CompletableFuture<?>[WORKERS];

    @Setup
    public void setUp() {
        int elements = tensorBytes / Float.BYTES;
        inputs = new FloatBuffer[WORKERS];
        outputs = new FloatBuffer[WORKERS];
        for (int rank = 0; rank < WORKERS; rank++) {
            // Input and output apart: repeated sums in place would grow until unrepresentable.
            inputs[rank] = FloatBuffer.wrap(Gradients.array(elements, rank));
            outputs[rank] = FloatBuffer.allocate(elements);
        }
        cluster = new EmbeddedCluster(WORKERS);
    }

    /** One all-reduce: every worker submits its tensor, then all complete. */
    @Benchmark
    public FloatBuffer[] allReduce() {
        for (int rank = 0; rank < WORKERS; rank++) {
            pending[rank] = cluster.worker(rank).allReduceAsync(inputs[rank], outputs[rank], ReduceOp.SUM);
        }
        for (CompletableFuture<?> done : pending) {
            done.join();
        }
        return outputs;
    }

    @TearDown
    public void tearDown() {
        cluster.close();
    }
}
