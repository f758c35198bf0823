package io.switchml.client;

import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;

import java.nio.Buffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * An all-reduce the application submitted and that has not returned yet, as a failover sees it:
 * its buffers (so unfinished blocks can be redone from the input, and finished ones copied from the
 * output), and the future the application holds, which outlives the switch it was first sent to.
 */
final class PendingOperation {
    /** Number among all all-reduces of this context, across switches. */
    final long sequence;
    final ReduceOp op;
    final int length;
    final CompletableFuture<Void> result = new CompletableFuture<>();
    private final FloatBuffer floatIn;
    private final FloatBuffer floatOut;
    private final IntBuffer intIn;
    private final IntBuffer intOut;
    /** Number of the all-reduce in the session it was last sent to; -1 when not sent to a session. */
    private long sessionSequence = -1;
    private SwitchSession session;
    /** Completions of earlier attempts (on a lost switch) are ignored. Guarded by this. */
    private int attempt;

    private PendingOperation(long sequence, ReduceOp op, int length, FloatBuffer floatIn, FloatBuffer floatOut,
                             IntBuffer intIn, IntBuffer intOut) {
        this.sequence = sequence;
        this.op = op;
        this.length = length;
        this.floatIn = floatIn;
        this.floatOut = floatOut;
        this.intIn = intIn;
        this.intOut = intOut;
    }

    /** Views of the buffers, so that the application moving their positions does not matter. */
    static PendingOperation floats(long sequence, FloatBuffer in, FloatBuffer out, ReduceOp op) {
        return new PendingOperation(sequence, op, in.remaining(), in.slice(), out.slice(), null, null);
    }

    static PendingOperation ints(long sequence, IntBuffer in, IntBuffer out, ReduceOp op) {
        return new PendingOperation(sequence, op, in.remaining(), null, null, in.slice(), out.slice());
    }

    boolean isFloat() {
        return floatIn != null;
    }

    /** Sends the whole all-reduce to {@code backend}; its outcome becomes {@link #result} unless superseded. */
    synchronized void sendTo(AllReduce backend) {
        int mine = ++attempt;
        if (backend instanceof SwitchSession s) {
            session = s;
            sessionSequence = s.submitted();
        } else {
            session = null;
            sessionSequence = -1;
        }
        CompletableFuture<Void> sent = isFloat()
                ? backend.allReduceAsync(floatIn.duplicate(), floatOut.duplicate(), op)
                : backend.allReduceAsync(intIn.duplicate(), intOut.duplicate(), op);
        sent.whenComplete((v, error) -> finish(mine, error));
    }

    /** Taken over by a failover: whatever the lost switch's attempt still reports is ignored. */
    synchronized void supersede() {
        attempt++;
        session = null;
        sessionSequence = -1;
    }

    /** Its number in {@code s}, or -1 when it was not sent there. */
    synchronized long sequenceIn(SwitchSession s) {
        return session == s ? sessionSequence : -1;
    }

    private synchronized void finish(int from, Throwable error) {
        if (from != attempt) {
            return;
        }
        if (error == null) {
            result.complete(null);
        } else {
            result.completeExceptionally(error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                    ? error.getCause() : error);
        }
    }

    /** A buffer of the input's type holding the given blocks' input elements, back to back. */
    Buffer gatherInput(int[] blocks, int k) {
        int total = BlockRanges.elements(blocks, k, length);
        if (isFloat()) {
            FloatBuffer to = FloatBuffer.allocate(total);
            for (int b : blocks) {
                to.put(floatIn.slice(b * k, BlockRanges.end(b, k, length) - b * k));
            }
            return to.flip();
        }
        IntBuffer to = IntBuffer.allocate(total);
        for (int b : blocks) {
            to.put(intIn.slice(b * k, BlockRanges.end(b, k, length) - b * k));
        }
        return to.flip();
    }

    /** Writes {@code gathered} (as {@link #gatherInput} laid it out) into the given blocks of the output. */
    void scatterOutput(Buffer gathered, int[] blocks, int k) {
        int at = 0;
        for (int b : blocks) {
            int n = BlockRanges.end(b, k, length) - b * k;
            if (isFloat()) {
                floatOut.put(b * k, (FloatBuffer) gathered, at, n);
            } else {
                intOut.put(b * k, (IntBuffer) gathered, at, n);
            }
            at += n;
        }
    }

    /** The output's bits of the given blocks, back to back: a float as its raw int bits. */
    void copyOutputBits(int[] blocks, int k, int[] to, int at) {
        for (int b : blocks) {
            for (int i = b * k, end = BlockRanges.end(b, k, length); i < end; i++) {
                to[at++] = isFloat() ? Float.floatToRawIntBits(floatOut.get(i)) : intOut.get(i);
            }
        }
    }

    /** The inverse of {@link #copyOutputBits}: writes the bits into the given blocks of the output. */
    void writeOutputBits(int[] blocks, int k, int[] from, int at) {
        for (int b : blocks) {
            for (int i = b * k, end = BlockRanges.end(b, k, length); i < end; i++) {
                if (isFloat()) {
                    floatOut.put(i, Float.intBitsToFloat(from[at++]));
                } else {
                    intOut.put(i, from[at++]);
                }
            }
        }
    }
}
