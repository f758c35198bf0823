package io.switchml.kernels.vector;

import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.kernels.PayloadKernels;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The kernels on the Vector API, for JDK 17 and later (docs/ARCHITECTURE.md section 13). As in the
 * protocol module's array kernels, a packet crosses between its buffer and a byte array in one bulk
 * copy; here the element loops run a vector of lanes at a time, and the big-endian byte order is one
 * byte shuffle per vector. No vector crosses a method boundary: a helper that returned one, once the
 * JIT had compiled it on its own, was called rather than inlined and boxed its vector on every
 * iteration (1 KiB allocated per packet in SwitchProgramAllocationTest, in some runs). The arithmetic
 * is the reference's, lane by lane (float to double, the multiply, the rounding bias, the low 32
 * bits), so every result is the same bit for bit.
 *
 * <p>Only array accesses of the Vector API are used: its buffer accesses differ between JDK 17
 * ({@code ByteBuffer}) and 22+ ({@code MemorySegment}).
 *
 * <p>Until C2 has compiled them where they are called, Vector API calls run as plain Java on boxed
 * vectors, some 30x slower than compiled: a JVM's first 64 MiB of passes took 0.54-0.61 s here, then
 * 0.018 s (the array kernels 0.087 s, then 0.025 s). A warm-up thread that ran these kernels until
 * compiled, with the array loops standing in meanwhile, was tried and dropped: the branch between the
 * two made C2 stop keeping the callers' vectors in registers (1 KiB allocated per packet for good).
 */
final class VectorKernels implements PayloadKernels {
    static final String NAME = "vector";
    private static final double ROUNDING_BIAS = 0x1.8p52;
    private static final VarHandle BIG_ENDIAN_INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    /**
     * Doubles of the widest vectors this CPU has; floats, ints and bytes of the same lane count, half as wide, for
     * every pass, the int-only ones too: a JVM that meets byte vectors of two shapes at one call in the Vector API
     * (JDK 17's {@code reinterpretAsInts}) stops compiling it to vector instructions and boxes (1 KiB per packet).
     */
    private static final VectorSpecies<Double> DOUBLES = DoubleVector.SPECIES_PREFERRED;
    private static final int LANES = DOUBLES.length();
    private static final VectorShape HALF = VectorShape.forBitSize(Math.max(64, LANES * Integer.SIZE));
    private static final VectorSpecies<Float> FLOATS = VectorSpecies.of(float.class, HALF);
    private static final VectorSpecies<Integer> INTS = VectorSpecies.of(int.class, HALF);
    private static final VectorSpecies<Byte> BYTES = VectorSpecies.of(byte.class, HALF);
    private static final VectorShuffle<Byte> SWAP = swap(BYTES);

    private final byte[] bytes;

    VectorKernels(int maxElements) {
        this.bytes = new byte[maxElements * Integer.BYTES];
    }

    /** Why this CPU's vectors are no use here, or null. */
    static String unsupportedReason() {
        return DOUBLES.vectorBitSize() < 256 ? "the CPU's widest vectors are " + DOUBLES.vectorBitSize() + " bits (< 256)" : null;
    }

    private static VectorShuffle<Byte> swap(VectorSpecies<Byte> species) {
        return VectorShuffle.fromOp(species, i -> (i & ~3) + 3 - (i & 3));
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int maxMagnitudeBits(float[] src, int from, int to) {
        int i = from;
        int max = 0;
        // A reduction per vector, not a vector carried from one iteration to the next: JDK 17 boxes such a vector.
        for (int bound = from + FLOATS.loopBound(to - from); i < bound; i += LANES) {
            max = Math.max(max, FloatVector.fromArray(FLOATS, src, i).reinterpretAsInts().and(0x7FFFFFFF)
                    .reduceLanes(VectorOperators.MAX));
        }
        return Math.max(max, BlockQuantizer.maxMagnitudeBits(src, i, to));
    }

    @Override
    public void quantize(float[] src, int from, int n, double scale, ByteBuffer dst, int at) {
        byte[] b = bytes;
        int i = 0;
        for (int bound = FLOATS.loopBound(n); i < bound; i += LANES) {
            DoubleVector wide = (DoubleVector) FloatVector.fromArray(FLOATS, src, from + i).castShape(DOUBLES, 0);
            IntVector q = (IntVector) wide.mul(scale).add(ROUNDING_BIAS).reinterpretAsLongs().castShape(INTS, 0);
            q.reinterpretAsBytes().rearrange(SWAP).intoArray(b, i * Integer.BYTES);
        }
        for (; i < n; i++) {
            BIG_ENDIAN_INT.set(b, i * Integer.BYTES, BlockQuantizer.quantize(src[from + i], scale));
        }
        dst.put(at, b, 0, n * Integer.BYTES);
    }

    @Override
    public void storeFloatBits(float[] src, int from, int n, ByteBuffer dst, int at) {
        byte[] b = bytes;
        int i = 0;
        for (int bound = FLOATS.loopBound(n); i < bound; i += LANES) {
            FloatVector.fromArray(FLOATS, src, from + i).reinterpretAsBytes().rearrange(SWAP).intoArray(b, i * Integer.BYTES);
        }
        for (; i < n; i++) {
            BIG_ENDIAN_INT.set(b, i * Integer.BYTES, Float.floatToRawIntBits(src[from + i]));
        }
        dst.put(at, b, 0, n * Integer.BYTES);
    }

    @Override
    public void storeInts(int[] src, int from, int n, ByteBuffer dst, int at) {
        byte[] b = bytes;
        int i = 0;
        for (int bound = INTS.loopBound(n); i < bound; i += LANES) {
            IntVector.fromArray(INTS, src, from + i).reinterpretAsBytes().rearrange(SWAP).intoArray(b, i * Integer.BYTES);
        }
        for (; i < n; i++) {
            BIG_ENDIAN_INT.set(b, i * Integer.BYTES, src[from + i]);
        }
        dst.put(at, b, 0, n * Integer.BYTES);
    }

    @Override
    public void zero(ByteBuffer dst, int at, int n) {
        Arrays.fill(bytes, 0, n * Integer.BYTES, (byte) 0);
        dst.put(at, bytes, 0, n * Integer.BYTES);
    }

    @Override
    public void dequantize(ByteBuffer src, int at, int n, double reciprocal, float[] dst, int to) {
        byte[] b = load(src, at, n);
        int i = 0;
        for (int bound = INTS.loopBound(n); i < bound; i += LANES) {
            IntVector sums = ByteVector.fromArray(BYTES, b, i * Integer.BYTES).rearrange(SWAP).reinterpretAsInts();
            DoubleVector scaled = ((DoubleVector) sums.castShape(DOUBLES, 0)).mul(reciprocal);
            ((FloatVector) scaled.castShape(FLOATS, 0)).intoArray(dst, to + i);
        }
        for (; i < n; i++) {
            dst[to + i] = BlockQuantizer.dequantizeByReciprocal((int) BIG_ENDIAN_INT.get(b, i * Integer.BYTES), reciprocal);
        }
    }

    @Override
    public void loadInts(ByteBuffer src, int at, int n, int[] dst, int to) {
        byte[] b = load(src, at, n);
        int i = 0;
        for (int bound = INTS.loopBound(n); i < bound; i += LANES) {
            ByteVector.fromArray(BYTES, b, i * Integer.BYTES).rearrange(SWAP).reinterpretAsInts().intoArray(dst, to + i);
        }
        for (; i < n; i++) {
            dst[to + i] = (int) BIG_ENDIAN_INT.get(b, i * Integer.BYTES);
        }
    }

    @Override
    public void addInts(ByteBuffer src, int at, int n, int[] sums) {
        byte[] b = load(src, at, n);
        int i = 0;
        for (int bound = INTS.loopBound(n); i < bound; i += LANES) {
            IntVector addend = ByteVector.fromArray(BYTES, b, i * Integer.BYTES).rearrange(SWAP).reinterpretAsInts();
            IntVector.fromArray(INTS, sums, i).add(addend).intoArray(sums, i);
        }
        for (; i < n; i++) {
            sums[i] += (int) BIG_ENDIAN_INT.get(b, i * Integer.BYTES);
        }
    }

    @Override
    public int loadFloatBits(ByteBuffer src, int at, int n, int[] dst, int to, int maxSoFar) {
        byte[] b = load(src, at, n);
        int i = 0;
        int max = maxSoFar;
        for (int bound = INTS.loopBound(n); i < bound; i += LANES) {
            IntVector bits = ByteVector.fromArray(BYTES, b, i * Integer.BYTES).rearrange(SWAP).reinterpretAsInts();
            bits.intoArray(dst, to + i);
            max = Math.max(max, bits.and(0x7FFFFFFF).reduceLanes(VectorOperators.MAX));
        }
        for (; i < n; i++) {
            int bits = (int) BIG_ENDIAN_INT.get(b, i * Integer.BYTES);
            dst[to + i] = bits;
            max = Math.max(max, bits & 0x7FFFFFFF);
        }
        return max;
    }

    @Override
    public void quantizeBits(int[] bits, int from, int n, double scale, int[] sums, boolean first) {
        int i = 0;
        int bound = INTS.loopBound(n);
        // Two loops, not one choosing between two vectors: a vector that a phi merges is not kept in registers.
        if (first) {
            for (; i < bound; i += LANES) {
                DoubleVector wide = (DoubleVector) IntVector.fromArray(INTS, bits, from + i).reinterpretAsFloats().castShape(DOUBLES, 0);
                ((IntVector) wide.mul(scale).add(ROUNDING_BIAS).reinterpretAsLongs().castShape(INTS, 0)).intoArray(sums, i);
            }
        } else {
            for (; i < bound; i += LANES) {
                DoubleVector wide = (DoubleVector) IntVector.fromArray(INTS, bits, from + i).reinterpretAsFloats().castShape(DOUBLES, 0);
                ((IntVector) wide.mul(scale).add(ROUNDING_BIAS).reinterpretAsLongs().castShape(INTS, 0))
                        .add(IntVector.fromArray(INTS, sums, i)).intoArray(sums, i);
            }
        }
        for (; i < n; i++) {
            int q = BlockQuantizer.quantize(Float.intBitsToFloat(bits[from + i]), scale);
            sums[i] = first ? q : sums[i] + q;
        }
    }

    private byte[] load(ByteBuffer src, int at, int n) {
        src.get(at, bytes, 0, n * Integer.BYTES);
        return bytes;
    }
}
