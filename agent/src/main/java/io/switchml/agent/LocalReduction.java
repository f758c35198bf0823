package io.switchml.agent;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The element loops of a host whose ranks share one agent (docs/ARCHITECTURE.md, "Hosts of several ranks"): before
 * the job's all-reduce, the local ranks' tensors are summed into the first one's, in local-rank order (float32 adds,
 * left to right; int32 adds wrap); after it, the result is written into every other local rank's tensor, divided by
 * the launch's ranks where a MEAN was asked for that the job, of one worker per host, cannot compute.
 *
 * <p>The buffers are the shared memory's (direct, native order): each pass copies a chunk into a Java array in bulk
 * (a memcpy), works on arrays (loops that C2 vectorises) and copies back. The range is cut into parts run in
 * parallel, up to one per core and local rank; each part owns its scratch arrays, so a pass allocates nothing per
 * element. One pass at a time per instance: the agent keeps one for sums and one for results.
 */
final class LocalReduction implements AutoCloseable {
    private static final int CHUNK = 16 * 1024;
    /** Below this many elements a tensor is one part: handing it to another thread costs more than it saves. */
    private static final int PARALLEL_ABOVE = 256 * 1024;

    private final int parts;
    private final ExecutorService helpers;
    private final float[][] floatsA;
    private final float[][] floatsB;
    private final int[][] intsA;
    private final int[][] intsB;
    private final List<Future<?>> running = new ArrayList<>();

    /** For {@code localRanks} ranks, with up to {@code cores} parts in parallel. */
    LocalReduction(int localRanks, int cores, String name) {
        this.parts = Math.max(1, Math.min(localRanks, cores));
        this.helpers = parts > 1 ? Executors.newFixedThreadPool(parts - 1, r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        }) : null;
        floatsA = new float[parts][CHUNK];
        floatsB = new float[parts][CHUNK];
        intsA = new int[parts][CHUNK];
        intsB = new int[parts][CHUNK];
    }

    /** {@code tensors[0] = tensors[0] + tensors[1] + ...}, element by element, in that order. */
    void sumFloats(FloatBuffer[] tensors, int count) {
        inParts(count, (part, from, length) -> {
            float[] sum = floatsA[part];
            float[] next = floatsB[part];
            tensors[0].get(from, sum, 0, length);
            for (int t = 1; t < tensors.length; t++) {
                tensors[t].get(from, next, 0, length);
                for (int i = 0; i < length; i++) {
                    sum[i] += next[i];
                }
            }
            tensors[0].put(from, sum, 0, length);
        });
    }

    /** {@code tensors[0] = tensors[0] + tensors[1] + ...}, element by element, wrapping as int32. */
    void sumInts(IntBuffer[] tensors, int count) {
        inParts(count, (part, from, length) -> {
            int[] sum = intsA[part];
            int[] next = intsB[part];
            tensors[0].get(from, sum, 0, length);
            for (int t = 1; t < tensors.length; t++) {
                tensors[t].get(from, next, 0, length);
                for (int i = 0; i < length; i++) {
                    sum[i] += next[i];
                }
            }
            tensors[0].put(from, sum, 0, length);
        });
    }

    /** {@code tensors[0]}'s elements, divided by {@code divisor} unless it is 1, into every tensor (the first too). */
    void shareFloats(FloatBuffer[] tensors, int count, int divisor) {
        inParts(count, (part, from, length) -> {
            float[] result = floatsA[part];
            tensors[0].get(from, result, 0, length);
            if (divisor != 1) {
                float d = divisor;
                for (int i = 0; i < length; i++) {
                    result[i] /= d;
                }
                tensors[0].put(from, result, 0, length);
            }
            for (int t = 1; t < tensors.length; t++) {
                tensors[t].put(from, result, 0, length);
            }
        });
    }

    /** {@code tensors[0]}'s elements, divided by {@code divisor} (toward zero) unless it is 1, into every tensor. */
    void shareInts(IntBuffer[] tensors, int count, int divisor) {
        inParts(count, (part, from, length) -> {
            int[] result = intsA[part];
            tensors[0].get(from, result, 0, length);
            if (divisor != 1) {
                for (int i = 0; i < length; i++) {
                    result[i] /= divisor;
                }
                tensors[0].put(from, result, 0, length);
            }
            for (int t = 1; t < tensors.length; t++) {
                tensors[t].put(from, result, 0, length);
            }
        });
    }

    @FunctionalInterface
    private interface Chunk {
        void run(int part, int from, int length);
    }

    /** Runs {@code chunk} over [0, count) in chunks, the range cut into parts; part 0 on the calling thread. */
    private void inParts(int count, Chunk chunk) {
        int used = count > PARALLEL_ABOVE ? parts : 1;
        int per = (count + used - 1) / used;
        try {
            for (int p = 1; p < used; p++) {
                int part = p;
                running.add(helpers.submit(() -> chunks(chunk, part, part * per, Math.min(count, (part + 1) * per))));
            }
            chunks(chunk, 0, 0, Math.min(count, per));
            for (Future<?> f : running) {
                f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while summing this host's tensors", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("summing this host's tensors failed: " + e.getCause(), e.getCause());
        } finally {
            running.clear();
        }
    }

    private static void chunks(Chunk chunk, int part, int from, int to) {
        for (int at = from; at < to; at += CHUNK) {
            chunk.run(part, at, Math.min(CHUNK, to - at));
        }
    }

    @Override
    public void close() {
        if (helpers != null) {
            helpers.shutdownNow();
        }
    }
}
