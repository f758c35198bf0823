package io.switchml.collectives;

import io.switchml.api.SwitchMLException;

import java.nio.ByteBuffer;

/**
 * Top-k sparsification with error feedback, as Deep Gradient Compression (Lin et al., ICLR 2018): a worker
 * adds the residual it kept from earlier steps to its gradient, sends the k elements of largest magnitude of
 * that sum, and keeps the rest as the next residual. With {@link Compression#momentum} it also does DGC's
 * momentum correction: it accumulates a local velocity instead of the gradient, so that the sum of what it
 * sends over time is what momentum SGD would have applied, and clears the velocity of what it sent.
 *
 * <p>The selection is exact and deterministic: elements are ranked by the bits of their magnitude
 * ({@code floatToRawIntBits(x) & 0x7fffffff}, which orders finite values by |x|, puts infinities above
 * them and NaNs above those), ties broken by the lower index. {@link #select} finds the k-th key with a
 * two-level radix select (a histogram of the top 16 bits, then of the low 15 of the chosen bucket), so it
 * costs three passes over the tensor whatever k is; {@link TopKReference#selectByDefinition} sorts instead.
 *
 * <p>Message (little-endian): the {@link CompressedMessage} header with k and the momentum's float bits, then
 * the k indices in ascending order (int32), then their k values (float32): 16 + 8k bytes.
 */
final class TopKCodec {
    static final int KIND = 0x4B504F54; // "TOPK"
    private static final int HIGH_BUCKETS = 1 << 16;
    private static final int LOW_BUCKETS = 1 << 15;

    private final Compression compression;
    private final int[] histogram = new int[HIGH_BUCKETS];
    private int[] selected = new int[0];

    TopKCodec(Compression compression) {
        this.compression = compression;
    }

    /** Bytes of the message for a tensor of {@code length} at its step {@code step}. */
    long messageBytes(int length, long step) {
        return CompressedMessage.HEADER_BYTES + 8L * compression.topK(length, step);
    }

    /**
     * Accumulates the gradient into the residual, writes the message of the k largest elements of the residual into
     * {@code out} (from position 0; limit set to its end), and zeroes those k in the residual. Without momentum
     * correction {@code residual[i] = gradient[i] + residual[i]}; with momentum m, {@code velocity[i] = m * velocity[i]
     * + gradient[i]}, then {@code residual[i] = residual[i] + velocity[i]}, and the k sent are zeroed in the velocity
     * too (DGC's momentum factor masking: a coordinate just applied does not keep pushing).
     *
     * @param velocity the tensor's velocity; unused (may be null) without momentum correction
     */
    void encode(float[] gradient, float[] residual, float[] velocity, int length, long step, ByteBuffer out) {
        float m = compression.momentumFactor();
        if (m == 0f) {
            for (int i = 0; i < length; i++) {
                residual[i] = gradient[i] + residual[i];
            }
        } else {
            for (int i = 0; i < length; i++) {
                float u = m * velocity[i] + gradient[i];
                velocity[i] = u;
                residual[i] = residual[i] + u;
            }
        }
        int k = compression.topK(length, step);
        if (selected.length < k) {
            selected = new int[k];
        }
        select(residual, length, k, selected, histogram);
        out.clear();
        CompressedMessage.putHeader(out, KIND, length, k, momentumBits());
        int at = CompressedMessage.HEADER_BYTES;
        for (int j = 0; j < k; j++, at += 4) {
            out.putInt(at, selected[j]);
        }
        for (int j = 0; j < k; j++, at += 4) {
            int i = selected[j];
            out.putFloat(at, residual[i]);
            residual[i] = 0f;
        }
        if (m != 0f) {
            for (int j = 0; j < k; j++) {
                velocity[selected[j]] = 0f;
            }
        }
        out.position(0).limit(at);
    }

    /** The header's second parameter: the momentum's float bits (0 without momentum correction), so workers that disagree fail. */
    private int momentumBits() {
        return Float.floatToIntBits(compression.momentumFactor());
    }

    /**
     * Adds the message's values into {@code sum} ({@code sum[i] = sum[i] + value}); checks that it is a top-k
     * message of the same tensor and k, with indices ascending and in range.
     */
    void addTo(ByteBuffer message, float[] sum, int length, long step, String from) {
        int k = compression.topK(length, step);
        CompressedMessage.expectHeader(message, KIND, length, k, momentumBits(), messageBytes(length, step), from,
                "a top-k message of " + length + " elements with k = " + k + momentumWords(momentumBits()));
        int indexAt = CompressedMessage.HEADER_BYTES;
        int valueAt = indexAt + 4 * k;
        int previous = -1;
        for (int j = 0; j < k; j++, indexAt += 4, valueAt += 4) {
            int i = message.getInt(indexAt);
            if (i <= previous || i >= length) {
                throw new SwitchMLException(from + " sent a top-k message whose index " + j + " is " + i + " (after "
                        + previous + ", of " + length + " elements): the message is corrupt");
            }
            sum[i] = sum[i] + message.getFloat(valueAt);
            previous = i;
        }
    }

    /** How a message's momentum reads in an error: nothing without momentum correction. */
    static String momentumWords(int bits) {
        return bits == 0 ? "" : " and momentum " + Float.intBitsToFloat(bits);
    }

    /** The ranking key: the bits of |x| as a non-negative int. */
    static int key(float x) {
        return Float.floatToRawIntBits(x) & 0x7fffffff;
    }

    /**
     * Writes into {@code out[0..k)} the indices of the k elements of {@code values[0..length)} with the largest keys,
     * ties to the lower index, in ascending index order.
     *
     * @param histogram scratch of at least 2^16 ints
     */
    static void select(float[] values, int length, int k, int[] out, int[] histogram) {
        if (k < 0 || k > length) {
            throw new IllegalArgumentException("cannot select " + k + " of " + length + " elements");
        }
        if (k == 0) {
            return;
        }
        if (k == length) {
            for (int i = 0; i < length; i++) {
                out[i] = i;
            }
            return;
        }
        // Level 1: which top-16-bit bucket holds the k-th largest key, and how many keys lie above it.
        java.util.Arrays.fill(histogram, 0, HIGH_BUCKETS, 0);
        for (int i = 0; i < length; i++) {
            histogram[key(values[i]) >>> 15]++;
        }
        int high = HIGH_BUCKETS - 1;
        int above = 0;
        while (above + histogram[high] < k) {
            above += histogram[high];
            high--;
        }
        // Level 2: within that bucket, the low 15 bits of the k-th key.
        java.util.Arrays.fill(histogram, 0, LOW_BUCKETS, 0);
        for (int i = 0; i < length; i++) {
            int key = key(values[i]);
            if (key >>> 15 == high) {
                histogram[key & (LOW_BUCKETS - 1)]++;
            }
        }
        int low = LOW_BUCKETS - 1;
        while (above + histogram[low] < k) {
            above += histogram[low];
            low--;
        }
        int threshold = high << 15 | low;
        int ties = k - above; // keys equal to the threshold to take, the lowest indices first
        int n = 0;
        for (int i = 0; i < length; i++) {
            int key = key(values[i]);
            if (key > threshold) {
                out[n++] = i;
            } else if (key == threshold && ties > 0) {
                out[n++] = i;
                ties--;
            }
        }
        if (n != k) {
            throw new IllegalStateException("top-k selected " + n + " elements instead of " + k);
        }
    }
}
