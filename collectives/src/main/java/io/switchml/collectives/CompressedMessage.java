package io.switchml.collectives;

import io.switchml.api.MismatchedOperationException;

import java.nio.ByteBuffer;

/**
 * The 16-byte header of a compressed gradient, in front of the codec's body (little-endian int32s):
 * the codec's kind, the tensor's length, and two parameters of the codec (top-k: k and the momentum's float
 * bits, 0 without momentum correction; QSGD: the levels and the bucket size with the norm in its top bits).
 * A worker checks every message it decodes against its own settings, so workers configured differently
 * fail with both settings named instead of adding unrelated numbers.
 */
final class CompressedMessage {
    static final int HEADER_BYTES = 16;
    /** The largest message: blocks travel as one all-gather frame with an int32 length. */
    static final long MAX_BYTES = Integer.MAX_VALUE - 64;

    private CompressedMessage() {
    }

    static void putHeader(ByteBuffer out, int kind, int length, int first, int second) {
        out.putInt(0, kind).putInt(4, length).putInt(8, first).putInt(12, second);
    }

    /**
     * Checks the header and the size of a received message.
     *
     * @param from     who sent it, e.g. "rank 2"
     * @param expected what this worker expected, in words
     */
    static void expectHeader(ByteBuffer message, int kind, int length, int first, int second, long bytes, String from,
                             String expected) {
        if (message.limit() < HEADER_BYTES) {
            throw new MismatchedOperationException(from + " sent a message of " + message.limit() + " bytes where this worker"
                    + " expected " + expected);
        }
        int k = message.getInt(0);
        int l = message.getInt(4);
        int a = message.getInt(8);
        int b = message.getInt(12);
        if (k != kind || l != length || a != first || b != second || message.limit() != bytes) {
            throw new MismatchedOperationException(from + " sent " + describe(k, l, a, b) + " (" + message.limit()
                    + " bytes) where this worker expected " + expected + " (" + bytes + " bytes); every worker must run"
                    + " the same algorithm with the same settings (ratio, momentum, levels, bucket, norm) on the same tensors");
        }
    }

    private static String describe(int kind, int length, int first, int second) {
        if (kind == TopKCodec.KIND) {
            return "a top-k message of " + length + " elements with k = " + first + TopKCodec.momentumWords(second);
        }
        if (kind == QsgdCodec.KIND) {
            return "a QSGD message of " + length + " elements with s = " + first + ", buckets of "
                    + (second & QsgdCodec.BUCKET_MASK) + " and the "
                    + Compression.Norm.values()[Math.min(second >>> QsgdCodec.NORM_SHIFT, 1)].id() + " norm";
        }
        return "a message of unknown kind 0x" + Integer.toHexString(kind);
    }
}
