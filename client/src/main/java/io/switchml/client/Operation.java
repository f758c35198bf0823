package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.api.UnrepresentableValueException;
import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadCodec;

import java.nio.Buffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One all-reduce as the worker threads see it: where its elements are, how a block is encoded into
 * a packet and decoded from a result, and when it is done. Each worker thread handles a contiguous
 * share of the elements and reports back through {@link #laneDone()}.
 */
abstract class Operation<B extends Buffer> {
    /** Elements are read from {@code in[inBase + i]} and written to {@code out[outBase + i]}. */
    final B in;
    final int inBase;
    final B out;
    final int outBase;
    final long sequence;
    final ReduceOp op;
    final int length;
    final int workers;
    final CompletableFuture<Void> future = new CompletableFuture<>();
    final OperationDescriptor descriptor;

    private final AtomicInteger lanesLeft;
    private final Executor completions;
    private final String description;
    /** First block found unrepresentable on some worker; written by lanes, read at the end. */
    private final UnrepresentableBlocks unrepresentable = new UnrepresentableBlocks();

    Operation(long sequence, ReduceOp op, String type, B in, B out, int workers, int lanes, Executor completions,
              String description) {
        this.in = in;
        this.inBase = in.position();
        this.out = out;
        this.outBase = out.position();
        this.sequence = sequence;
        this.op = op;
        this.length = in.remaining();
        this.workers = workers;
        this.lanesLeft = new AtomicInteger(lanes);
        this.completions = completions;
        this.description = description;
        this.descriptor = OperationDescriptor.of(sequence, length, type, op);
    }

    /** Whether a bootstrap round must carry block exponents ahead of the values. */
    abstract boolean quantized();

    /** Whether the one-round mode (raw values, quantized by the switch) can carry it. */
    boolean oneRoundCapable() {
        return true;
    }

    /** Values a packet of {@code elements} payload elements carries: as many, or twice as many in 16-bit lanes. */
    int valuesPerPacket(int elements) {
        return elements;
    }

    /** Payload elements that carry {@code values} of this operation's values. */
    int elementsFor(int values) {
        return values;
    }

    /** Largest magnitude bits of elements [from, to); only for quantized types. */
    abstract int maxMagnitudeBits(int from, int to, PayloadCodec codec);

    /** Writes elements [from, to) into the packet's payload, which carries exactly those (a short packet when fewer than k). */
    abstract void encode(int from, int to, int eMax, AggregationPacket packet, PayloadCodec codec);

    /** Writes elements [from, to) as they are (float32 as raw bits) into the payload: the one-round mode. */
    abstract void encodeRaw(int from, int to, AggregationPacket packet, PayloadCodec codec);

    /** Writes the result for elements [from, to) into the output. */
    abstract void decode(AggregationPacket result, int from, int to, int eMax, boolean unrepresentableBlock,
                         PayloadCodec codec);

    /** Writes +0 for elements [from, to) of the output: a block that was zero at every worker. */
    abstract void writeZeros(int from, int to, PayloadCodec codec);

    /** Index and value text of this worker's first unrepresentable element in [from, to), or null. */
    abstract String firstUnrepresentable(int from, int to);

    void noteUnrepresentable(int from, int to) {
        unrepresentable.note(from, to, firstUnrepresentable(from, to));
    }

    /** Called by each worker thread when its share is done; the last one completes the future. */
    void laneDone() {
        if (lanesLeft.decrementAndGet() == 0) {
            String error = unrepresentable.describe(description);
            completions.execute(() -> {
                if (error == null) {
                    future.complete(null);
                } else {
                    future.completeExceptionally(new UnrepresentableValueException(error));
                }
            });
        }
    }

    void fail(Throwable error) {
        completions.execute(() -> future.completeExceptionally(error));
    }

    String description() {
        return description;
    }
}
