package io.switchml.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.BlockQuantizer;
import java.nio.FloatBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The quantizer benchmark's state computes what the worker computes. */
class QuantizerBenchmarkTest {

    @ParameterizedTest
    @CsvSource({"64, HEAP, scalar, true", "64, DIRECT, array, false", "256, HEAP, vector, false", "256, DIRECT, scalar, false",
            "15360, HEAP, array, false", "15360, DIRECT, vector, false", "256, DIRECT, vector, true"})
    void roundTripIsWithinHalfAStepAndCopyIsExact(int elements, BufferKind kind, String kernels, boolean mixedBuffers) {
        QuantizerBenchmark bench = new QuantizerBenchmark();
        bench.elements = elements;
        bench.buffer = kind;
        bench.kernels = kernels;
        bench.mixedBuffers = mixedBuffers;
        bench.setUp();
        assertThat(bench.codec.kernels().name()).isEqualTo(kernels);
        assertThat(bench.input.isDirect()).isEqualTo(kind == BufferKind.DIRECT);

        int eMax = bench.quantize();
        assertThat(eMax).isEqualTo(BlockQuantizer.exponent(BlockQuantizer.maxMagnitudeBits(bench.input, 0, elements)));
        assertThat(Math.scalb(1.0, eMax)).isGreaterThan(maxMagnitude(bench.input, elements));

        FloatBuffer out = bench.dequantize();
        // docs/java-and-djl.md, "Numbers": one contribution is off by at most half a quantization step, plus the
        // rounding of the result to float.
        double halfStep = Math.scalb(1.0, eMax) / BlockQuantizer.maxTerm(QuantizerBenchmark.WORKERS) / 2;
        for (int i = 0; i < elements; i++) {
            float x = bench.input.get(i);
            assertThat((double) Math.abs(out.get(i) - x)).as("element %d", i)
                    .isLessThanOrEqualTo(halfStep + Math.ulp(x));
        }

        FloatBuffer copy = bench.copy();
        for (int i = 0; i < elements; i++) {
            assertThat(copy.get(i)).isEqualTo(bench.input.get(i));
        }
    }

    private static double maxMagnitude(FloatBuffer values, int elements) {
        double max = 0;
        for (int i = 0; i < elements; i++) {
            max = Math.max(max, Math.abs(values.get(i)));
        }
        return max;
    }
}
