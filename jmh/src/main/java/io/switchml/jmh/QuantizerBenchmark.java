package io.switchml.jmh;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.PayloadCodec;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.kernels.Kernels;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The worker's per-packet conversions, one block of {@code elements} floats, against a bulk copy
 * of the same floats (what moving the bytes alone costs). GB/s of float input is
 * {@code 4 * elements / (ns/op)}.
 *
 * <p>The block is encoded as the worker does it: the max-magnitude pass that yields the block's
 * exponent, then scaling and rounding into a direct big-endian packet buffer (the worker's send
 * scratch). Decoding reads such a packet (as from a direct receive buffer) into the tensor.
 *
 * <p>{@code kernels} chooses the element loops ({@link Kernels}); the fork gets the Vector API's module, which
 * the {@code vector} kernels need. With {@code mixedBuffers} the set-up first runs the codec over heap, direct,
 * sliced and read-only packets, as a process that has seen every kind of buffer has: that is where
 * per-element buffer calls stop being inlined (the scalar kernels' weakness).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "--add-modules=jdk.incubator.vector")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class QuantizerBenchmark {
    /** The worker count only sets the scale factor; the work per element does not depend on it. */
    static final int WORKERS = 4;

    /** 64 and 256: SwitchML's 256 B and 1 KiB packets; 15360: the 60 KiB loopback packet. */
    @Param({"64", "256", "15360"})
    int elements;

    @Param({"HEAP", "DIRECT"})
    BufferKind buffer;

    @Param({"scalar", "array", "vector"})
    String kernels;

    @Param({"true", "false"})
    boolean mixedBuffers;

    FloatBuffer input;
    FloatBuffer output;
    final AggregationPacket packet = new AggregationPacket();
    PayloadCodec codec;
    /** The dequantization divisor of the block in the packet (a SUM's). */
    double divisor;

    @Setup
    public void setUp() {
        codec = new PayloadCodec(Kernels.choose(kernels).create(elements), elements);
        input = Gradients.fill(buffer.floats(elements), 42);
        output = buffer.floats(elements);
        PayloadSize size = PayloadSize.ofElements(elements);
        if (mixedBuffers) {
            for (ByteBuffer kind : List.of(ByteBuffer.allocate(size.packetBytes()), ByteBuffer.allocateDirect(size.packetBytes()),
                    ByteBuffer.allocateDirect(size.packetBytes() + 8).position(8).slice())) {
                for (ByteBuffer b : List.of(kind, kind.asReadOnlyBuffer())) {
                    AggregationPacket p = new AggregationPacket().wrap(b, 0);
                    for (int i = 0; i < 2_000; i++) {
                        if (!b.isReadOnly()) {
                            codec.quantize(input, 0, elements, 1.0, p, elements);
                        }
                        codec.dequantize(p, elements, 3.0, output, 0);
                    }
                }
            }
        }
        packet.wrap(BufferKind.DIRECT.packet(size.packetBytes()), 0)
                .header(size, 1, 0, 0, 0, 0, 0);
        int eMax = quantize();
        divisor = BlockQuantizer.scale(eMax, WORKERS);
    }

    /** Exponent pass, then the block into the packet; returns the block exponent. */
    @Benchmark
    public int quantize() {
        int eMax = BlockQuantizer.exponent(codec.maxMagnitudeBits(input, 0, elements));
        codec.quantize(input, 0, elements, BlockQuantizer.scale(eMax, WORKERS), packet, elements);
        return eMax;
    }

    @Benchmark
    public FloatBuffer dequantize() {
        codec.dequantize(packet, elements, divisor, output, 0);
        return output;
    }

    /** The baseline: the same floats, same kind of buffer, bulk-copied (arraycopy or memcpy). */
    @Benchmark
    public FloatBuffer copy() {
        return output.put(0, input, 0, elements);
    }
}
