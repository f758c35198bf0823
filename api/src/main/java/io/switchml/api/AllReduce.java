package io.switchml.api;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * An all-reduce among the workers of one job: every worker passes a tensor of the same length and
 * receives the element-wise reduction of all of them. In-network aggregation implements it, and
 * the baselines (ring, parameter server) will implement it too, so training code can switch
 * algorithm by configuration.
 *
 * <p>Buffers are read from their position to their limit and written at the output's position;
 * positions and limits are not changed. The input and output may be the same buffer (in place).
 * Operations run in the order they are submitted; every worker must submit the same sequence of
 * operations (same lengths, types and ops).
 */
public interface AllReduce extends AutoCloseable {
    /** This worker's rank, 0..workers()-1. */
    int rank();

    /** Number of workers in the job. */
    int workers();

    CompletableFuture<Void> allReduceAsync(FloatBuffer in, FloatBuffer out, ReduceOp op);

    CompletableFuture<Void> allReduceAsync(IntBuffer in, IntBuffer out, ReduceOp op);

    default void allReduce(FloatBuffer in, FloatBuffer out, ReduceOp op) {
        Futures.await(allReduceAsync(in, out, op));
    }

    default void allReduce(IntBuffer in, IntBuffer out, ReduceOp op) {
        Futures.await(allReduceAsync(in, out, op));
    }

    default void allReduce(float[] data, ReduceOp op) {
        FloatBuffer buffer = FloatBuffer.wrap(data);
        allReduce(buffer, buffer, op);
    }

    default void allReduce(float[] in, float[] out, ReduceOp op) {
        Tensors.checkOutput(in.length, out.length);
        allReduce(FloatBuffer.wrap(in), FloatBuffer.wrap(out), op);
    }

    default void allReduce(int[] data, ReduceOp op) {
        IntBuffer buffer = IntBuffer.wrap(data);
        allReduce(buffer, buffer, op);
    }

    default void allReduce(int[] in, int[] out, ReduceOp op) {
        Tensors.checkOutput(in.length, out.length);
        allReduce(IntBuffer.wrap(in), IntBuffer.wrap(out), op);
    }

    default CompletableFuture<Void> allReduceAsync(float[] data, ReduceOp op) {
        FloatBuffer buffer = FloatBuffer.wrap(data);
        return allReduceAsync(buffer, buffer, op);
    }

    default CompletableFuture<Void> allReduceAsync(int[] data, ReduceOp op) {
        IntBuffer buffer = IntBuffer.wrap(data);
        return allReduceAsync(buffer, buffer, op);
    }

    /** Blocks until every worker of the job has called it. */
    void barrier();

    /** Every worker calls it; all receive the value passed by {@code root}. */
    byte[] broadcast(byte[] value, int root);

    @Override
    void close();
}
