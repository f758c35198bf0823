package io.switchml.api;

import java.nio.FloatBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntConsumer;

/**
 * One data-parallel step's gradient buckets averaged over the ranks that train in it, as every
 * framework integration does it: the buckets are submitted in order behind the step's agreement
 * ({@link UnevenInputs#stepAsync()}), each right after it is packed (so bucket k+1 is packed while
 * bucket k is aggregated), then taken in order as they complete, so a bucket is unpacked while later
 * ones are still in flight.
 */
public final class FusedMean {
    private FusedMean() {
    }

    /**
     * Calls {@code pack} with {@code b} right before bucket {@code b} is submitted, then writes into {@code out[b]} the mean of {@code in[b]} over the {@code trainingRanks} ranks that
     * train (ranks that joined contribute zeros, so the all-reduce's MEAN over all ranks is rescaled),
     * then calls {@code done} with {@code b}, bucket after bucket. {@code in} and {@code out} may be
     * the same buffers.
     */
    public static void average(AllReduce allReduce, List<FloatBuffer> in, List<FloatBuffer> out,
                               CompletableFuture<Integer> trainingRanks, IntConsumer pack, IntConsumer done) {
        if (in.size() != out.size()) {
            throw new IllegalArgumentException(in.size() + " input buckets for " + out.size() + " outputs");
        }
        CompletableFuture<?>[] inFlight = new CompletableFuture<?>[in.size()];
        for (int b = 0; b < inFlight.length; b++) {
            pack.accept(b);
            inFlight[b] = allReduce.allReduceAsync(in.get(b), out.get(b), ReduceOp.MEAN);
        }
        int training = Futures.await(trainingRanks);
        // MEAN divides by all ranks; joined ones added zeros, so the mean over those training is larger by this.
        float rescale = training == allReduce.workers() ? 1f : (float) allReduce.workers() / training;
        for (int b = 0; b < inFlight.length; b++) {
            Futures.await(inFlight[b]);
            if (rescale != 1f) {
                FloatBuffer floats = out.get(b);
                for (int i = floats.position(); i < floats.limit(); i++) {
                    floats.put(i, floats.get(i) * rescale);
                }
            }
            done.accept(b);
        }
    }
}
