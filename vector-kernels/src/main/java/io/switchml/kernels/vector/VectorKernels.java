package io.switchml.kernels.vector;

import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.kernels.ArrayKernels;
import io.switchml.protocol.kernels.PayloadKernels;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The kernels on the Vector API, for JDK 17 and later (docs/ARCHITECTURE.md section 13). As in the
 * protocol module's array kernels, a packet crosses between its buffer and a byte array in one bulk
 * copy; here the element loops run a vector of lanes at a time, and the big-endian byte order is one
 * byte shuffle per vector. No vector crosses a method boundary: a method the JIT did not inline would
 * box it. The arithmetic is the reference's, lane by lane (float to double, the
 * multiply, the rounding bias, the low 32 bits), so every result is the same bit for bit.
 *
 * <p>Only array accesses of the Vector API are used: its buffer accesses differ between JDK 17
 * ({@code ByteBuffer}) and 22+ ({@code MemorySegment}).
 *
 * <p>Until C2 has compiled them, Vector API calls run as plain Java on boxed vectors, some 30x slower
 * than the array loops (the passes of a 64 MiB all-reduce took 0.54-0.61 s in a JVM's first run, 0.018 s
 * compiled; the array loops 0.087 s and 0.025 s). So the first instance starts a daemon thread that runs
 * every kernel on small blocks until they run at compiled speed (0.7-1 s of one core), and until then
 * every instance runs {@link ArrayKernels}' loops, which give the same bits.
 */
final class VectorKernels implements PayloadKernels {
    static final String NAME = "vector";
    private static final double ROUNDING_BIAS = 0x1.8p52;
    private static final VarHandle BIG_ENDIAN_INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    /** Doubles of the widest vectors this CPU has; floats and ints of the same lane count, half as wide. */
    private static final VectorSpecies<Double> DOUBLES = DoubleVector.SPECIES_PREFERRED;
    private static final int LANES = DOUBLES.length();
    private static final VectorShape HALF = VectorShape.forBitSize(Math.max(64, LANES * Integer.SIZE));
    private static final VectorSpecies<Float> FLOATS = VectorSpecies.of(float.class, HALF);
    private static final VectorSpecies<Integer> INTS = VectorSpecies.of(int.class, HALF);
    private static final VectorSpecies<Byte> BYTES = VectorSpecies.of(byte.class, HALF);
    /** For int-only passes: the widest vectors. */
    private static final VectorSpecies<Integer> WIDE_INTS = IntVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Byte> WIDE_BYTES = ByteVector.SPECIES_PREFERRED;
    private static final VectorShuffle<Byte> SWAP = swap(BYTES);
    private static final VectorShuffle<Byte> WIDE_SWAP = swap(WIDE_BYTES);

    /**
     * Elements of the warm-up's blocks (not a multiple of the lanes, so that the tails are compiled too), and its
     * calls of each kernel per round.
     */
    private static final int WARM_UP_ELEMENTS = 1031;
    private static final int WARM_UP_CALLS_PER_ROUND = 20;
    /** The most rounds the warm-up runs, compiled or not (a JVM whose C2 is off, say). */
    private static final int WARM_UP_MAX_ROUNDS = 500;
    /** A round this many times faster than the first means compiled code: boxed vectors run about 30x slower. */
    private static final int COMPILED_SPEED_UP = 8;
    private static final AtomicBoolean WARMING = new AtomicBoolean();
    private static volatile boolean warm;

    private final byte[] bytes;
    /** The loops that run while the vector code is not compiled yet. */
    private final PayloadKernels cold;

    VectorKernels(int maxElements) {
        this.bytes = new byte[maxElements * Integer.BYTES];
        this.cold = new ArrayKernels(maxElements);
        if (WARMING.compareAndSet(false, true)) {
            Thread warmUp = new Thread(VectorKernels::warmUp, "switchml-vector-kernels-warm-up");
            warmUp.setDaemon(true);
            warmUp.start();
        }
    }

    /** Whether the warm-up is done: the vector code runs from then on. */
    static boolean warm() {
        return warm;
    }

    /**
     * Runs every kernel on small blocks, in rounds, until two rounds in a row run at compiled speed (C2 compiles in
     * its own threads, so the end of a loop says nothing), then lets every instance use them.
     */
    private static void warmUp() {
        try {
            VectorKernels kernels = vectorOnly(WARM_UP_ELEMENTS);
            int n = WARM_UP_ELEMENTS;
            float[] floats = new float[n];
            int[] ints = new int[n];
            for (int i = 0; i < n; i++) {
                floats[i] = i * 0.37f - 11;
                ints[i] = Float.floatToRawIntBits(floats[i]);
            }
            // Every kind of buffer a process meets, so that code compiled here meets no new kind later.
            ByteBuffer[] packets = {ByteBuffer.allocateDirect(n * Integer.BYTES + 10), ByteBuffer.allocate(n * Integer.BYTES + 10)};
            long first = 0;
            int fastRounds = 0;
            for (int round = 0; round < WARM_UP_MAX_ROUNDS && fastRounds < 2; round++) {
                long started = System.nanoTime();
                for (int call = 0; call < WARM_UP_CALLS_PER_ROUND; call++) {
                    ByteBuffer packet = packets[call & 1];
                    ByteBuffer readOnly = packet.asReadOnlyBuffer();
                    kernels.vectorMaxMagnitudeBits(floats, 0, n);
                    kernels.vectorQuantize(floats, 0, n, 1 << 20, packet, 10);
                    kernels.vectorDequantize(readOnly, 10, n, 1.0 / (1 << 20), floats, 0);
                    kernels.vectorStoreFloatBits(floats, 0, n, packet, 10);
                    kernels.vectorLoadFloatBits(packet, 10, n, ints, 0, 0);
                    kernels.vectorAddInts(readOnly, 10, n, ints);
                    kernels.vectorLoadInts(packet, 10, n, ints, 0);
                    kernels.vectorQuantizeBits(ints, 0, n, 1.0, ints, (call & 2) == 0);
                    kernels.vectorStoreInts(ints, 0, n, packet, 10);
                }
                long took = System.nanoTime() - started;
                first = round == 0 ? took : first;
                fastRounds = took * COMPILED_SPEED_UP < first ? fastRounds + 1 : 0;
            }
        } finally {
            warm = true;
        }
    }

    /** Kernels that run the vector code whether it is compiled or not: the warm-up's, and the contract test's. */
    static VectorKernels vectorOnly(int maxElements) {
        return new VectorKernels(new byte[maxElements * Integer.BYTES]);
    }

    private VectorKernels(byte[] bytes) {
        this.bytes = bytes;
        this.cold = null;
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
        if (!warm && cold != null) {
            return cold.maxMagnitudeBits(src, from, to);
        }
        return vectorMaxMagnitudeBits(src, from, to);
    }

    private int vectorMaxMagnitudeBits(float[] src, int from, int to) {
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
        if (!warm && cold != null) {
            cold.quantize(src, from, n, scale, dst, at);
            return;
        }
        vectorQuantize(src, from, n, scale, dst, at);
    }

    private void vectorQuantize(float[] src, int from, int n, double scale, ByteBuffer dst, int at) {
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
        if (!warm && cold != null) {
            cold.storeFloatBits(src, from, n, dst, at);
            return;
        }
        vectorStoreFloatBits(src, from, n, dst, at);
    }

    private void vectorStoreFloatBits(float[] src, int from, int n, ByteBuffer dst, int at) {
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
        if (!warm && cold != null) {
            cold.storeInts(src, from, n, dst, at);
            return;
        }
        vectorStoreInts(src, from, n, dst, at);
    }

    private void vectorStoreInts(int[] src, int from, int n, ByteBuffer dst, int at) {
        byte[] b = bytes;
        int i = 0;
        for (int bound = WIDE_INTS.loopBound(n); i < bound; i += WIDE_INTS.length()) {
            IntVector.fromArray(WIDE_INTS, src, from + i).reinterpretAsBytes().rearrange(WIDE_SWAP).intoArray(b, i * Integer.BYTES);
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
        if (!warm && cold != null) {
            cold.dequantize(src, at, n, reciprocal, dst, to);
            return;
        }
        vectorDequantize(src, at, n, reciprocal, dst, to);
    }

    private void vectorDequantize(ByteBuffer src, int at, int n, double reciprocal, float[] dst, int to) {
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
        if (!warm && cold != null) {
            cold.loadInts(src, at, n, dst, to);
            return;
        }
        vectorLoadInts(src, at, n, dst, to);
    }

    private void vectorLoadInts(ByteBuffer src, int at, int n, int[] dst, int to) {
        byte[] b = load(src, at, n);
        int i = 0;
        for (int bound = WIDE_INTS.loopBound(n); i < bound; i += WIDE_INTS.length()) {
            ByteVector.fromArray(WIDE_BYTES, b, i * Integer.BYTES).rearrange(WIDE_SWAP).reinterpretAsInts().intoArray(dst, to + i);
        }
        for (; i < n; i++) {
            dst[to + i] = (int) BIG_ENDIAN_INT.get(b, i * Integer.BYTES);
        }
    }

    @Override
    public void addInts(ByteBuffer src, int at, int n, int[] sums) {
        if (!warm && cold != null) {
            cold.addInts(src, at, n, sums);
            return;
        }
        vectorAddInts(src, at, n, sums);
    }

    private void vectorAddInts(ByteBuffer src, int at, int n, int[] sums) {
        byte[] b = load(src, at, n);
        int i = 0;
        for (int bound = WIDE_INTS.loopBound(n); i < bound; i += WIDE_INTS.length()) {
            IntVector addend = ByteVector.fromArray(WIDE_BYTES, b, i * Integer.BYTES).rearrange(WIDE_SWAP).reinterpretAsInts();
            IntVector.fromArray(WIDE_INTS, sums, i).add(addend).intoArray(sums, i);
        }
        for (; i < n; i++) {
            sums[i] += (int) BIG_ENDIAN_INT.get(b, i * Integer.BYTES);
        }
    }

    @Override
    public int loadFloatBits(ByteBuffer src, int at, int n, int[] dst, int to, int maxSoFar) {
        if (!warm && cold != null) {
            return cold.loadFloatBits(src, at, n, dst, to, maxSoFar);
        }
        return vectorLoadFloatBits(src, at, n, dst, to, maxSoFar);
    }

    private int vectorLoadFloatBits(ByteBuffer src, int at, int n, int[] dst, int to, int maxSoFar) {
        byte[] b = load(src, at, n);
        int i = 0;
        int max = maxSoFar;
        for (int bound = WIDE_INTS.loopBound(n); i < bound; i += WIDE_INTS.length()) {
            IntVector bits = ByteVector.fromArray(WIDE_BYTES, b, i * Integer.BYTES).rearrange(WIDE_SWAP).reinterpretAsInts();
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
        if (!warm && cold != null) {
            cold.quantizeBits(bits, from, n, scale, sums, first);
            return;
        }
        vectorQuantizeBits(bits, from, n, scale, sums, first);
    }

    private void vectorQuantizeBits(int[] bits, int from, int n, double scale, int[] sums, boolean first) {
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
