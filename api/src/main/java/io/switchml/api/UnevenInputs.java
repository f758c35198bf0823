package io.switchml.api;


import java.util.concurrent.CompletableFuture;
import java.util.function.IntConsumer;

/**
 * Steps of data-parallel training when the ranks may hold different numbers of batches, after
 * PyTorch's {@code torch.distributed.algorithms.Join}: every step starts with a two-element
 * all-reduce saying how many ranks still train and whether one has ended, so the ranks agree on
 * each step before any gradient is summed.
 *
 * <ul>
 *   <li>A rank with data calls {@link #step()} and then its step's all-reduces; the returned count
 *       of training ranks is what a mean divides by (ranks that joined contribute zeros).</li>
 *   <li>A rank that ran out calls {@link #join}: it shadows every step the others still take with
 *       the same all-reduces over zeros, until every rank has joined.</li>
 *   <li>A rank that calls {@link #finish()} instead says every rank must end here: if another
 *       still has data, both fail with {@link StepCountMismatchException} rather than pairing
 *       the wrong all-reduces or waiting for a timeout.</li>
 * </ul>
 *
 * <p>One instance per rank and sequence of steps; not thread-safe. All ranks' step all-reduces
 * must be the same (lengths, types, ops) whether they train or shadow.
 */
public final class UnevenInputs {
    private static final int TRAINING = 0;
    private static final int ENDED = 1;

    private final AllReduce allReduce;
    private final int[] header = new int[2];
    private long steps;
    /** Steps trained since the last join or finish: what the messages count. */
    private long phaseSteps;

    public UnevenInputs(AllReduce allReduce) {
        this.allReduce = allReduce;
    }

    /**
     * Starts a step with data: returns how many ranks train in it (1..workers), the others having
     * joined. Fails, on every rank, when one has ended without joining.
     */
    public int step() {
        return Futures.await(stepAsync());
    }

    /**
     * {@link #step()} without waiting: the agreement is queued before the step's own all-reduces,
     * which may be submitted at once behind it (all-reduces complete in order), so it costs no
     * round trip of its own. The future fails with {@link StepCountMismatchException} where
     * {@code step()} throws it.
     */
    public CompletableFuture<Integer> stepAsync() {
        header[TRAINING] = 1;
        header[ENDED] = 0;
        return allReduce.allReduceAsync(header, ReduceOp.SUM).thenApply(done -> {
            if (header[ENDED] > 0) {
                throw new StepCountMismatchException("rank " + allReduce.rank() + " has data for step " + (phaseSteps + 1)
                        + " but " + header[ENDED] + " rank(s) ended after " + phaseSteps + " step(s) without joining: every"
                        + " rank must run the same number of steps, or the ranks that run out of data must join"
                        + " (UnevenInputs.join, GradientSynchronizer with joining enabled)");
            }
            steps++;
            phaseSteps++;
            return header[TRAINING];
        });
    }

    /**
     * This rank has run out of data: until every rank has joined, runs {@code shadowStep} once per
     * step the others still take, with the number of ranks training in it; it must submit the
     * same all-reduces as a training step, over zeros. Returns the number of steps shadowed.
     */
    public long join(IntConsumer shadowStep) {
        long shadowed = 0;
        while (true) {
            int[] sums = exchange(0, 0);
            if (sums[TRAINING] == 0) {
                phaseSteps = 0;
                return shadowed; // everyone has joined (or ended)
            }
            shadowStep.accept(sums[TRAINING]);
            shadowed++;
        }
    }

    /**
     * Ends this rank's steps expecting every rank to end here too; fails, on every rank, when one
     * still has data.
     */
    public void finish() {
        int[] sums = exchange(0, 1);
        long ended = phaseSteps;
        phaseSteps = 0;
        if (sums[TRAINING] > 0) {
            throw new StepCountMismatchException("rank " + allReduce.rank() + " ended after " + ended + " step(s) but "
                    + sums[TRAINING] + " rank(s) still have data for step " + (ended + 1) + ": every rank must run the same"
                    + " number of steps, or the ranks that run out of data must join (UnevenInputs.join,"
                    + " GradientSynchronizer with joining enabled)");
        }
    }

    /** Steps this rank trained (with data) so far. */
    public long steps() {
        return steps;
    }

    private int[] exchange(int training, int ended) {
        header[TRAINING] = training;
        header[ENDED] = ended;
        allReduce.allReduce(header, ReduceOp.SUM);
        return header;
    }
}
