package io.switchml.protocol.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.SixteenBitLanes;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The contract every {@link PayloadKernels} keeps: for the same inputs, the same bytes and values as
 * {@link ScalarKernels}, the reference. Each implementation's test extends this class. Cases cover
 * every packet length up to the largest (60 KiB) with a bias to vector and block boundaries, byte
 * offsets, heap, direct, sliced and read-only buffers, and values from zeros and subnormals to the
 * largest representable, +-2^127, NaN and the infinities, for n = 1, 2, 255 and 256 workers.
 */
public abstract class PayloadKernelsContract {
    private static final int MAX_ELEMENTS = 15360;
    private static final int[] WORKERS = {1, 2, 255, 256};

    /** The implementation under test, for packets of at most {@code maxElements} elements. */
    protected abstract PayloadKernels kernels(int maxElements);

    private final PayloadKernels reference = new ScalarKernels();

    /** Where a payload lives. */
    public enum Kind {
        HEAP, DIRECT, HEAP_SLICE, DIRECT_SLICE;

        ByteBuffer allocate(int bytes) {
            return switch (this) {
                case HEAP -> ByteBuffer.allocate(bytes);
                case DIRECT -> ByteBuffer.allocateDirect(bytes);
                case HEAP_SLICE -> ByteBuffer.allocate(bytes + 24).position(24).slice();
                case DIRECT_SLICE -> ByteBuffer.allocateDirect(bytes + 24).position(24).slice();
            };
        }
    }

    /**
     * One case: n elements at byte {@code at} of a buffer, from index {@code from} of the source arrays.
     *
     * @param seed makes the values and the buffers' other bytes
     */
    public record Case(int n, int at, int from, Kind kind, int workers, long seed) {
        float[] floats() {
            SplittableRandom random = new SplittableRandom(seed);
            float[] values = new float[from + n];
            int style = random.nextInt(4);
            for (int i = 0; i < values.length; i++) {
                values[i] = switch (style) {
                    case 0 -> (float) (random.nextGaussian() * Math.scalb(1.0, random.nextInt(-20, 20)));
                    case 1 -> SPECIAL[random.nextInt(SPECIAL.length)];
                    case 2 -> Float.intBitsToFloat(random.nextInt());
                    default -> random.nextInt(8) == 0 ? SPECIAL[random.nextInt(SPECIAL.length)]
                            : (float) random.nextGaussian();
                };
            }
            return values;
        }

        int[] ints() {
            SplittableRandom random = new SplittableRandom(seed ^ 0x5DEECE66DL);
            int[] values = new int[from + n];
            for (int i = 0; i < values.length; i++) {
                values[i] = random.nextInt(10) == 0 ? (random.nextBoolean() ? Integer.MAX_VALUE : Integer.MIN_VALUE) : random.nextInt();
            }
            return values;
        }

        /** A buffer of this kind whose every byte is the same pseudo-random garbage for the same case. */
        ByteBuffer buffer() {
            ByteBuffer buffer = kind.allocate(at + n * Integer.BYTES + 5);
            SplittableRandom random = new SplittableRandom(seed ^ 0x9E3779B97F4A7C15L);
            for (int i = 0; i < buffer.capacity(); i++) {
                buffer.put(i, (byte) random.nextInt());
            }
            return buffer;
        }

        /** The scale of a block of these values as a worker computes it. */
        double scale(float[] values) {
            int bits = BlockQuantizer.maxMagnitudeBits(values, from, from + n);
            return BlockQuantizer.scale(BlockQuantizer.exponent(bits), workers);
        }
    }

    private static final float[] SPECIAL = {
        0f, -0f, Float.MIN_VALUE, -Float.MIN_VALUE, Float.MIN_NORMAL, 0x1.fffffcp-127f, 1f, -1f,
        0x1.fffffep126f, -0x1.fffffep126f, 0x1p127f, -0x1p127f, Float.MAX_VALUE, Float.NaN,
        Float.intBitsToFloat(0x7FC12345), Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 1e-30f, 65504f,
    };

    @Provide
    Arbitrary<Case> cases() {
        Arbitrary<Integer> lengths = Arbitraries.oneOf(
                Arbitraries.of(1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1023, 1024, 2047,
                        15359, MAX_ELEMENTS),
                Arbitraries.integers().between(1, MAX_ELEMENTS));
        return Combinators.combine(lengths, Arbitraries.integers().between(0, 13), Arbitraries.integers().between(0, 9),
                Arbitraries.of(Kind.class), Arbitraries.of(WORKERS[0], WORKERS[1], WORKERS[2], WORKERS[3]),
                Arbitraries.longs()).as(Case::new);
    }

    @Property(tries = 150)
    void maxMagnitudeBitsAgree(@ForAll("cases") Case c) {
        float[] values = c.floats();
        assertThat(kernels(c.n()).maxMagnitudeBits(values, c.from(), c.from() + c.n()))
                .isEqualTo(reference.maxMagnitudeBits(values, c.from(), c.from() + c.n()));
    }

    @Property(tries = 150)
    void quantizeWritesTheSameBytes(@ForAll("cases") Case c) {
        float[] values = c.floats();
        double scale = c.scale(values);
        ByteBuffer expected = c.buffer();
        ByteBuffer actual = c.buffer();
        reference.quantize(values, c.from(), c.n(), scale, expected, c.at());
        kernels(c.n()).quantize(values, c.from(), c.n(), scale, actual, c.at());
        assertSameQuantizedBytes(actual, expected, values, c, scale);
    }

    @Property(tries = 100)
    void storesWriteTheSameBytes(@ForAll("cases") Case c) {
        PayloadKernels kernels = kernels(c.n());
        ByteBuffer expected = c.buffer();
        ByteBuffer actual = c.buffer();
        reference.storeFloatBits(c.floats(), c.from(), c.n(), expected, c.at());
        kernels.storeFloatBits(c.floats(), c.from(), c.n(), actual, c.at());
        assertSameBytes(actual, expected);
        reference.storeInts(c.ints(), c.from(), c.n(), expected, c.at());
        kernels.storeInts(c.ints(), c.from(), c.n(), actual, c.at());
        assertSameBytes(actual, expected);
        reference.zero(expected, c.at(), c.n());
        kernels.zero(actual, c.at(), c.n());
        assertSameBytes(actual, expected);
    }

    @Property(tries = 150)
    void dequantizeReadsTheSameValues(@ForAll("cases") Case c) {
        ByteBuffer payload = readOnlyWhenOdd(c);
        double reciprocal = 1 / (c.scale(c.floats()) * (c.seed() % 3 == 0 ? c.workers() : 1));
        float[] expected = new float[c.from() + c.n()];
        float[] actual = new float[c.from() + c.n()];
        reference.dequantize(payload, c.at(), c.n(), reciprocal, expected, c.from());
        kernels(c.n()).dequantize(payload, c.at(), c.n(), reciprocal, actual, c.from());
        assertThat(bits(actual)).isEqualTo(bits(expected));
    }

    @Property(tries = 100)
    void sixteenBitLanesWriteAndReadTheSameBytesAndValues(@ForAll("cases") Case c) {
        float[] values = c.floats();
        int bits = BlockQuantizer.maxMagnitudeBits(values, c.from(), c.from() + c.n());
        double scale = SixteenBitLanes.scale(BlockQuantizer.exponent(bits), Math.min(c.workers(), SixteenBitLanes.MAX_WORKERS));
        ByteBuffer expected = c.buffer();
        ByteBuffer actual = c.buffer();
        reference.quantizePairs(values, c.from(), c.n(), scale, expected, c.at());
        kernels(c.n()).quantizePairs(values, c.from(), c.n(), scale, actual, c.at());
        assertSameBytes(actual, expected);

        ByteBuffer payload = readOnlyWhenOdd(c);
        float[] expectedValues = new float[c.from() + c.n()];
        float[] actualValues = new float[c.from() + c.n()];
        reference.dequantizePairs(payload, c.at(), c.n(), 1 / scale, expectedValues, c.from());
        kernels(c.n()).dequantizePairs(payload, c.at(), c.n(), 1 / scale, actualValues, c.from());
        assertThat(bits(actualValues)).isEqualTo(bits(expectedValues));
    }

    @Property(tries = 150)
    void loadsAndAddsAgree(@ForAll("cases") Case c) {
        PayloadKernels kernels = kernels(c.n());
        ByteBuffer payload = readOnlyWhenOdd(c);
        int[] expected = c.ints();
        int[] actual = c.ints();
        reference.loadInts(payload, c.at(), c.n(), expected, c.from());
        kernels.loadInts(payload, c.at(), c.n(), actual, c.from());
        assertThat(actual).isEqualTo(expected);

        int[] expectedSums = Arrays.copyOf(c.ints(), c.n());
        int[] actualSums = Arrays.copyOf(c.ints(), c.n());
        reference.addInts(payload, c.at(), c.n(), expectedSums);
        kernels.addInts(payload, c.at(), c.n(), actualSums);
        assertThat(actualSums).isEqualTo(expectedSums);

        int maxSoFar = (int) (c.seed() >>> 33);
        int expectedMax = reference.loadFloatBits(payload, c.at(), c.n(), expected, c.from(), maxSoFar);
        assertThat(kernels.loadFloatBits(payload, c.at(), c.n(), actual, c.from(), maxSoFar)).isEqualTo(expectedMax);
        assertThat(actual).isEqualTo(expected);
    }

    @Property(tries = 150)
    void oneRoundSumsAgree(@ForAll("cases") Case c) {
        PayloadKernels kernels = kernels(c.n());
        float[] values = c.floats();
        int[] bits = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            bits[i] = Float.floatToRawIntBits(values[i]);
        }
        double scale = c.scale(values);
        int[] expected = Arrays.copyOf(c.ints(), c.n());
        int[] actual = Arrays.copyOf(c.ints(), c.n());
        boolean first = c.seed() % 2 == 0;
        reference.quantizeBits(bits, c.from(), c.n(), scale, expected, first);
        kernels.quantizeBits(bits, c.from(), c.n(), scale, actual, first);
        assertThat(actual).isEqualTo(expected);
    }

    @Property(tries = 20)
    void oneInstanceServesPacketsOfEveryLengthInTurn(@ForAll("cases") Case c) {
        // The scratch of a long packet must not leak into a shorter one's result.
        PayloadKernels kernels = kernels(MAX_ELEMENTS);
        float[] big = new Case(MAX_ELEMENTS, 0, 0, Kind.HEAP, c.workers(), ~c.seed()).floats();
        kernels.quantize(big, 0, MAX_ELEMENTS, 1.0, ByteBuffer.allocate(MAX_ELEMENTS * Integer.BYTES), 0);
        float[] values = c.floats();
        double scale = c.scale(values);
        ByteBuffer expected = c.buffer();
        ByteBuffer actual = c.buffer();
        reference.quantize(values, c.from(), c.n(), scale, expected, c.at());
        kernels.quantize(values, c.from(), c.n(), scale, actual, c.at());
        assertSameQuantizedBytes(actual, expected, values, c, scale);
    }

    private static ByteBuffer readOnlyWhenOdd(Case c) {
        ByteBuffer buffer = c.buffer();
        return c.seed() % 2 != 0 ? buffer.asReadOnlyBuffer() : buffer;
    }

    private static int[] bits(float[] values) {
        int[] bits = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            bits[i] = Float.floatToRawIntBits(values[i]);
        }
        return bits;
    }

    /**
     * {@link #assertSameBytes} for quantize, whose contract leaves the elements of values outside its
     * domain (|x * scale| >= 2^31: NaN, the infinities, 2^127) to the implementation: those are taken as
     * the reference wrote them. Every other byte of the buffer, inside the payload and around it, must match.
     */
    private static void assertSameQuantizedBytes(ByteBuffer actual, ByteBuffer expected, float[] values, Case c,
                                                 double scale) {
        for (int i = 0; i < c.n(); i++) {
            if (!(Math.abs(values[c.from() + i] * scale) < 0x1p31)) {
                int at = c.at() + i * Integer.BYTES;
                actual.putInt(at, expected.getInt(at));
            }
        }
        assertSameBytes(actual, expected);
    }

    private static void assertSameBytes(ByteBuffer actual, ByteBuffer expected) {
        byte[] a = new byte[actual.capacity()];
        byte[] e = new byte[expected.capacity()];
        actual.get(0, a);
        expected.get(0, e);
        assertThat(a).isEqualTo(e);
    }
}
