package io.switchml.collectives;

import io.switchml.api.SwitchMLException;

import java.nio.ByteBuffer;

/**
 * QSGD (Alistarh et al., NeurIPS 2017): stochastic quantization of each bucket of d elements to s levels
 * per sign, scaled by the bucket's norm. Element v of a bucket of norm N becomes
 * {@code sign(v) x l x N / s}, where {@code l = floor(|v| x s / N + u)} (at most s) and u is uniform in [0, 1):
 * l is |v| s / N rounded down or up at random, so the quantized value is unbiased.
 *
 * <p>Exactly, in float32: {@code scale = (float) s / N}, {@code l = min(s, (int) (|v| * scale + u))},
 * code {@code c = s + l} (v >= 0) or {@code s - l} (v < 0); decoded {@code (float) (c - s) * (N / (float) s)}.
 * N is {@code (float) sqrt(sum of (double) v^2)} (L2, summed in index order) or the largest |v| (max norm).
 * u is {@link #uniform}(seed, rank, step, index) with 24 random bits: a counter-based generator, so any
 * element's rounding can be recomputed without replaying the others ({@link QsgdReference}).
 *
 * <p>Message (little-endian): the {@link CompressedMessage} header with s and the bucket size (norm in
 * its top bits), one float32 norm per bucket, then the codes, {@link Compression#codeBits()} bits each,
 * packed from the lowest bit up in int32 words: 16 + 4 ceil(n/d) + 4 ceil(n b / 32) bytes.
 */
final class QsgdCodec {
    static final int KIND = 0x44475351; // "QSGD"
    static final int NORM_SHIFT = 30;
    static final int BUCKET_MASK = (1 << NORM_SHIFT) - 1;

    private final Compression compression;
    private final int levels;
    private final int bits;

    QsgdCodec(Compression compression) {
        this.compression = compression;
        this.levels = compression.levels();
        this.bits = compression.codeBits();
    }

    static int buckets(int length, int bucket) {
        return (int) ((length + (long) bucket - 1) / bucket);
    }

    long messageBytes(int length) {
        return CompressedMessage.HEADER_BYTES + 4L * buckets(length, compression.bucket()) + 4 * ((length * (long) bits + 31) / 32);
    }

    private int second() {
        return compression.bucket() | compression.norm().ordinal() << NORM_SHIFT;
    }

    /** Quantizes {@code gradient[0..length)} as rank {@code rank} at the tensor's {@code step} into {@code out} (from 0). */
    void encode(float[] gradient, int length, int rank, long step, ByteBuffer out) {
        int d = compression.bucket();
        int nb = buckets(length, d);
        out.clear();
        CompressedMessage.putHeader(out, KIND, length, levels, second());
        int normAt = CompressedMessage.HEADER_BYTES;
        int at = normAt + 4 * nb;
        long word = 0;
        int filled = 0;
        long seed = compression.seed();
        for (int b = 0; b < nb; b++) {
            int from = b * d;
            int to = (int) Math.min(length, (long) from + d);
            float norm = norm(gradient, from, to, compression.norm());
            out.putFloat(normAt + 4 * b, norm);
            float scale = levels / norm;
            for (int i = from; i < to; i++) {
                word |= (long) code(gradient[i], scale, uniform(seed, rank, step, i), levels) << filled;
                filled += bits;
                if (filled >= 32) {
                    out.putInt(at, (int) word);
                    at += 4;
                    word >>>= 32;
                    filled -= 32;
                }
            }
        }
        if (filled > 0) {
            out.putInt(at, (int) word);
            at += 4;
        }
        out.position(0).limit(at);
    }

    /** Adds the message's decoded values into {@code sum}; checks that it is a QSGD message of the same tensor and settings. */
    void addTo(ByteBuffer message, float[] sum, int length, String from) {
        CompressedMessage.expectHeader(message, KIND, length, levels, second(), messageBytes(length), from,
                "a QSGD message of " + length + " elements with s = " + levels + ", buckets of " + compression.bucket()
                        + " and the " + compression.norm().id() + " norm");
        int d = compression.bucket();
        int nb = buckets(length, d);
        int normAt = CompressedMessage.HEADER_BYTES;
        int at = normAt + 4 * nb;
        long mask = (1L << bits) - 1;
        int maxCode = 2 * levels;
        long word = 0;
        int filled = 0;
        for (int b = 0; b < nb; b++) {
            int first = b * d;
            int to = (int) Math.min(length, (long) first + d);
            float unit = message.getFloat(normAt + 4 * b) / levels;
            for (int i = first; i < to; i++) {
                if (filled < bits) {
                    word |= (message.getInt(at) & 0xFFFF_FFFFL) << filled;
                    at += 4;
                    filled += 32;
                }
                int code = (int) (word & mask);
                word >>>= bits;
                filled -= bits;
                if (code > maxCode) {
                    throw new SwitchMLException(from + " sent a QSGD code " + code + " for element " + i + ", above 2s = "
                            + maxCode + ": the message is corrupt");
                }
                sum[i] = sum[i] + value(code, unit, levels);
            }
        }
    }

    /** The bucket's norm: {@code (float) sqrt(sum (double) v^2)} in index order, or the largest |v|. */
    static float norm(float[] values, int from, int to, Compression.Norm norm) {
        if (norm == Compression.Norm.MAX) {
            float max = 0f;
            for (int i = from; i < to; i++) {
                float a = Math.abs(values[i]);
                if (a > max || a != a) { // a NaN makes the bucket's norm NaN, as it would the L2 norm
                    max = a;
                    if (a != a) {
                        break;
                    }
                }
            }
            return max;
        }
        double squares = 0;
        for (int i = from; i < to; i++) {
            double v = values[i];
            squares += v * v;
        }
        return (float) Math.sqrt(squares);
    }

    /** The code of v: s + l or s - l with {@code l = min(s, (int) (|v| * scale + u))}. */
    static int code(float v, float scale, float u, int levels) {
        int l = (int) (Math.abs(v) * scale + u);
        if (l > levels) {
            l = levels;
        }
        return v < 0 ? levels - l : levels + l;
    }

    /** The value of a code in a bucket whose {@code unit = norm / (float) s}. */
    static float value(int code, float unit, int levels) {
        return (code - levels) * unit;
    }

    /** The uniform number in [0, 1) (24 bits) that rounds element {@code index} of rank {@code rank} at {@code step}. */
    static float uniform(long seed, int rank, long step, int index) {
        long z = seed + 0x9E3779B97F4A7C15L * (index + 1L) + 0xD1B54A32D192ED03L * (rank + 1L)
                + 0x8CB92BA72F3D8DD7L * (step + 1);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z ^= z >>> 31;
        return (z >>> 40) * 0x1.0p-24f;
    }
}
