package io.switchml.collectives;

import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Test tensors, the ways a caller can pass them, and the checks of a result. */
final class TestTensors {
    private TestTensors() {
    }

    /** How a worker hands its tensor to the all-reduce. */
    enum Passing {
        ARRAY_IN_PLACE, HEAP_BUFFERS_WITH_OFFSETS, DIRECT_IN_PLACE, DIRECT_BIG_ENDIAN_INTO_HEAP, ASYNC_ARRAY
    }

    /**
     * Values of mixed sign and magnitude (2^-8 to 2^8 times a Gaussian), so that sums round and
     * cancel; some exact zeros of both signs.
     */
    static float[][] floats(int workers, int length, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        float[][] t = new float[workers][length];
        for (float[] row : t) {
            for (int i = 0; i < length; i++) {
                int kind = random.nextInt(64);
                row[i] = kind == 0 ? 0.0f : kind == 1 ? -0.0f
                        : (float) (nextGaussian(random) * Math.scalb(1.0, random.nextInt(17) - 8));
            }
        }
        return t;
    }

    /** Full-range ints, so sums wrap. */
    static int[][] ints(int workers, int length, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int[][] t = new int[workers][length];
        for (int[] row : t) {
            for (int i = 0; i < length; i++) {
                row[i] = random.nextInt();
            }
        }
        return t;
    }

    private static double nextGaussian(SplittableRandom random) {
        // Box-Muller; SplittableRandom has no nextGaussian on Java 17.
        return Math.sqrt(-2 * Math.log(1 - random.nextDouble())) * Math.cos(2 * Math.PI * random.nextDouble());
    }

    static float[] allReduce(AllReduce allReduce, float[] input, ReduceOp op, Passing passing) throws Exception {
        int n = input.length;
        switch (passing) {
            case ARRAY_IN_PLACE: {
                float[] data = input.clone();
                allReduce.allReduce(data, op);
                return data;
            }
            case HEAP_BUFFERS_WITH_OFFSETS: {
                float[] src = new float[n + 3];
                System.arraycopy(input, 0, src, 3, n);
                float[] dst = new float[n + 7];
                Arrays.fill(dst, 42f);
                allReduce.allReduce(FloatBuffer.wrap(src, 3, n), FloatBuffer.wrap(dst, 5, n + 2), op);
                assertThat(Arrays.copyOfRange(src, 3, n + 3)).as("input untouched").isEqualTo(input);
                assertThat(new float[]{dst[0], dst[4], dst[n + 5], dst[n + 6]}).as("outside the output").containsOnly(42f);
                return Arrays.copyOfRange(dst, 5, n + 5);
            }
            case DIRECT_IN_PLACE: {
                FloatBuffer b = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.nativeOrder()).asFloatBuffer();
                b.put(input).flip();
                allReduce.allReduce(b, b, op);
                assertThat(b.position()).isZero();
                assertThat(b.limit()).isEqualTo(n);
                float[] out = new float[n];
                b.get(out);
                return out;
            }
            case DIRECT_BIG_ENDIAN_INTO_HEAP: {
                FloatBuffer in = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.BIG_ENDIAN).asFloatBuffer();
                in.put(input).flip();
                float[] out = new float[n];
                allReduce.allReduce(in, FloatBuffer.wrap(out), op);
                return out;
            }
            case ASYNC_ARRAY: {
                float[] data = input.clone();
                allReduce.allReduceAsync(data, op).get(60, TimeUnit.SECONDS);
                return data;
            }
            default:
                throw new AssertionError(passing);
        }
    }

    static int[] allReduce(AllReduce allReduce, int[] input, ReduceOp op, Passing passing) throws Exception {
        int n = input.length;
        switch (passing) {
            case ARRAY_IN_PLACE: {
                int[] data = input.clone();
                allReduce.allReduce(data, op);
                return data;
            }
            case HEAP_BUFFERS_WITH_OFFSETS: {
                int[] src = new int[n + 3];
                System.arraycopy(input, 0, src, 3, n);
                int[] dst = new int[n + 7];
                Arrays.fill(dst, 42);
                allReduce.allReduce(IntBuffer.wrap(src, 3, n), IntBuffer.wrap(dst, 5, n + 2), op);
                assertThat(Arrays.copyOfRange(src, 3, n + 3)).as("input untouched").isEqualTo(input);
                assertThat(new int[]{dst[0], dst[4], dst[n + 5], dst[n + 6]}).as("outside the output").containsOnly(42);
                return Arrays.copyOfRange(dst, 5, n + 5);
            }
            case DIRECT_IN_PLACE: {
                IntBuffer b = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.nativeOrder()).asIntBuffer();
                b.put(input).flip();
                allReduce.allReduce(b, b, op);
                int[] out = new int[n];
                b.get(out);
                return out;
            }
            case DIRECT_BIG_ENDIAN_INTO_HEAP: {
                IntBuffer in = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.BIG_ENDIAN).asIntBuffer();
                in.put(input).flip();
                int[] out = new int[n];
                allReduce.allReduce(in, IntBuffer.wrap(out), op);
                return out;
            }
            case ASYNC_ARRAY: {
                int[] data = input.clone();
                allReduce.allReduceAsync(data, op).get(60, TimeUnit.SECONDS);
                return data;
            }
            default:
                throw new AssertionError(passing);
        }
    }

    static int[] bits(float[] values) {
        int[] b = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = Float.floatToRawIntBits(values[i]);
        }
        return b;
    }

    /**
     * Checks a float32 result against the exact sum (computed in double, exact for these inputs):
     * n-1 roundings of a running sum err by at most (n-1) u sum|x| (u = 2^-24), and MEAN's division
     * adds half an ulp.
     */
    static void assertWithinRoundingOfExactSum(float[][] inputs, float[] result, ReduceOp op) {
        int n = inputs.length;
        double u = 0x1p-24;
        for (int i = 0; i < result.length; i++) {
            double exact = 0;
            double magnitude = 0;
            for (float[] row : inputs) {
                exact += row[i];
                magnitude += Math.abs(row[i]);
            }
            double bound = (n - 1) * u * magnitude * (1 + 1e-6);
            if (op == ReduceOp.MEAN) {
                exact /= n;
                bound = bound / n + u * Math.abs(result[i]) * (1 + 1e-6);
            }
            double error = Math.abs(result[i] - exact);
            if (!(error <= bound + Float.MIN_VALUE)) {
                throw new AssertionError("element " + i + ": " + result[i] + " differs from the exact " + op + " " + exact
                        + " by " + error + ", over the rounding bound " + bound);
            }
        }
    }

    /** The int32 result computed independently: a long sum narrowed (wraps), then Java division for MEAN. */
    static int[] expectedInts(int[][] inputs, ReduceOp op) {
        int n = inputs.length;
        int[] out = new int[inputs[0].length];
        for (int i = 0; i < out.length; i++) {
            long sum = 0;
            for (int[] row : inputs) {
                sum += row[i];
            }
            out[i] = op == ReduceOp.MEAN ? (int) sum / n : (int) sum;
        }
        return out;
    }
}
