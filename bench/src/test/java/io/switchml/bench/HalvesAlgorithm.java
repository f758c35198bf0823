package io.switchml.bench;

import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;
import io.switchml.collectives.Algorithm;
import io.switchml.collectives.Compression;
import io.switchml.collectives.RingReference;
import io.switchml.launch.ExactSum;
import io.switchml.launch.TcpBaseline;
import io.switchml.launch.WorkerConnection;

import java.nio.Buffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * A collective that exists only to show what adding one takes (docs/ARCHITECTURE.md section 1): this file and
 * one line in {@code META-INF/services/io.switchml.launch.AllReduceAlgorithm} of the test resources. {@code halves}
 * all-reduces the first and the second half of a tensor as two ring all-reduces, so element i is summed around
 * a ring of the half's length: its exact sums differ from the ring's over the whole tensor, and the bench's
 * verifier tells them apart.
 */
public final class HalvesAlgorithm extends TcpBaseline {
    public HalvesAlgorithm() {
        super(Algorithm.RING);
    }

    @Override
    public String id() {
        return "halves";
    }

    @Override
    public String summary() {
        return "test only: each half of the tensor through its own ring all-reduce";
    }

    @Override
    public WorkerConnection open(Map<String, String> settings, Compression compression, WorkerConnection.PeerExchange peers) {
        WorkerConnection ring = super.open(settings, compression, peers);
        return new WorkerConnection(new Halves(ring.allReduce()), ring.counters(), 0, 32);
    }

    @Override
    public ExactSum exactSum(ExactSum.Context context) {
        int workers = context.workers();
        return ExactSum.perElement(workers, (values, index, length) -> {
            int half = length / 2;
            return index < half
                    ? RingReference.element(values, RingReference.chunkOf(half, workers, index), ReduceOp.SUM)
                    : RingReference.element(values, RingReference.chunkOf(length - half, workers, index - half), ReduceOp.SUM);
        });
    }

    /** The ring's all-reduce, called once per half. */
    private record Halves(AllReduce ring) implements AllReduce {
        @Override
        public int rank() {
            return ring.rank();
        }

        @Override
        public int workers() {
            return ring.workers();
        }

        @Override
        public CompletableFuture<Void> allReduceAsync(FloatBuffer in, FloatBuffer out, ReduceOp op) {
            return halves(in, out, (from, count) -> ring.allReduceAsync(in.slice(in.position() + from, count),
                    out.slice(out.position() + from, count), op));
        }

        @Override
        public CompletableFuture<Void> allReduceAsync(IntBuffer in, IntBuffer out, ReduceOp op) {
            return halves(in, out, (from, count) -> ring.allReduceAsync(in.slice(in.position() + from, count),
                    out.slice(out.position() + from, count), op));
        }

        private static CompletableFuture<Void> halves(Buffer in, Buffer out,
                                                      BiFunction<Integer, Integer, CompletableFuture<Void>> slice) {
            int length = in.remaining();
            if (out.remaining() != length) {
                throw new IllegalArgumentException("input of " + length + " elements but output of " + out.remaining());
            }
            int half = length / 2;
            if (half == 0) {
                return slice.apply(0, length);
            }
            return CompletableFuture.allOf(slice.apply(0, half), slice.apply(half, length - half));
        }

        @Override
        public void barrier() {
            ring.barrier();
        }

        @Override
        public byte[] broadcast(byte[] value, int root) {
            return ring.broadcast(value, root);
        }

        @Override
        public void close() {
            ring.close();
        }
    }
}
