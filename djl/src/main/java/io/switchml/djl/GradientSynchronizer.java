package io.switchml.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.nn.Block;
import ai.djl.training.Trainer;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.listener.TrainingListenerAdapter;
import io.switchml.api.AllReduce;
import io.switchml.api.FusedMean;
import io.switchml.api.StepCountMismatchException;
import io.switchml.api.UnevenInputs;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Makes a DJL {@link Trainer} data-parallel: after every backward pass it replaces each trainable
 * parameter's gradient with the mean of that gradient over all workers, so every worker's
 * {@code trainer.step()} applies the same update and the parameters stay bit-identical.
 *
 * <p>The hook is {@link TrainingListener#onTrainingBatch}, which {@code EasyTrain.trainBatch} fires
 * after the backward pass and before {@code EasyTrain.fit} calls {@code trainer.step()}: add this
 * listener to the {@code TrainingConfig}. A custom loop calls {@link #synchronize(Block)} between
 * backward and step instead. A {@code ParameterServer} would be the other hook, but the
 * {@code Trainer} creates its own and calls it once per parameter in no fixed order, keyed by
 * per-process ids; here gradients go in one canonical order ({@link GradientLayout}), fused into
 * a few large all-reduces ({@link TensorFusion}) that are pipelined: bucket k+1 is packed while
 * bucket k is aggregated, and bucket k is unpacked while later ones are still in flight. DJL runs
 * the backward pass as one native call, so aggregation cannot overlap it.
 *
 * <p>DJL sums gradients over a trainer's devices; with one device per worker (required here) and a
 * batch-mean loss, the mean over workers is the gradient of the mean loss over the global batch,
 * as one process would compute it for a batch {@code workers} times larger.
 *
 * <p>Workers must start from the same parameters ({@link ParameterBroadcast}); the first
 * synchronization checks that every worker has the same parameter names and shapes.
 *
 * <p><b>Steps per rank.</b> Every step begins with a two-int all-reduce ({@link UnevenInputs}) in
 * which the ranks agree on who still trains; the gradients are submitted right behind it, so it
 * adds no round trip to wait for. By default every rank must run the same number of
 * steps per epoch: at the end of an epoch ({@code onEpoch}, which {@code EasyTrain.fit} fires, or
 * {@link #finish()} in a custom loop) a rank that still has data fails, and so does the one that
 * ended, with {@link StepCountMismatchException}. With {@link #joinUnevenInputs()}, a rank that runs out
 * of data joins instead ({@link #join(Trainer)}, at every epoch's end): it contributes zeros to the
 * others' remaining steps, the mean divides by the ranks still training, and it applies the same
 * averaged gradient with {@code trainer.step()}, so every rank ends the epoch with identical
 * parameters (and optimizer state).
 */
public final class GradientSynchronizer extends TrainingListenerAdapter {
    private final AllReduce allReduce;
    private final long bucketBytes;
    private final UnevenInputs uneven;
    private boolean joinUneven;
    /** Steps since the last epoch end; a custom loop that ends with some unchecked is checked on close. */
    private long unchecked;
    private boolean failed;
    private Block block;
    private TensorFusion fusion;
    /** The buckets' float views, what the all-reduce reads and writes. */
    private List<FloatBuffer> floats;
    private long steps;
    private long aggregationNanos;

    public GradientSynchronizer(AllReduce allReduce) {
        this(allReduce, TensorFusion.DEFAULT_BUCKET_BYTES);
    }

    /** @param bucketBytes the fusion threshold: gradients are aggregated in buckets of at most this many bytes */
    public GradientSynchronizer(AllReduce allReduce, long bucketBytes) {
        this.allReduce = allReduce;
        this.bucketBytes = bucketBytes;
        this.uneven = new UnevenInputs(allReduce);
    }

    /**
     * Lets the ranks hold different numbers of batches: at each epoch's end a rank that ran out
     * joins ({@link #join(Trainer)}) instead of failing the job.
     */
    public GradientSynchronizer joinUnevenInputs() {
        this.joinUneven = true;
        return this;
    }

    /** {@code EasyTrain.fit} fires it after each epoch: the ranks that ran out wait here for the others. */
    @Override
    public void onEpoch(Trainer trainer) {
        endEpoch(trainer);
    }

    /** {@code Trainer.close} fires it: a custom loop that never ended its last epoch is checked here. */
    @Override
    public void onTrainingEnd(Trainer trainer) {
        if (unchecked > 0 && !failed) {
            endEpoch(trainer);
        }
    }

    private void endEpoch(Trainer trainer) {
        if (joinUneven) {
            join(trainer);
        } else {
            prepare(trainer.getModel().getBlock());
            guarded(uneven::finish);
            unchecked = 0;
        }
    }

    /**
     * Every rank must end here, at the same step (a custom loop's end of an epoch); fails on every
     * rank with {@link StepCountMismatchException} when one still has data.
     */
    public void finish() {
        guarded(uneven::finish);
        unchecked = 0;
    }

    /**
     * This rank has run out of data: until every rank has, it takes part in the others' steps with
     * zero gradients, and applies their mean with {@code trainer.step()} as they do. Returns the
     * steps it shadowed.
     */
    public long join(Trainer trainer) {
        Block model = trainer.getModel().getBlock();
        List<TensorFusion.Bucket> buckets = prepare(model);
        long[] shadowed = new long[1];
        guarded(() -> shadowed[0] = uneven.join(training -> {
            for (TensorFusion.Bucket bucket : buckets) {
                FloatBuffer values = bucket.floats();
                for (int i = 0; i < values.limit(); i++) {
                    values.put(i, 0f);
                }
            }
            aggregate(buckets, CompletableFuture.completedFuture(training), false);
            trainer.step();
        }));
        unchecked = 0;
        return shadowed[0];
    }

    @Override
    public void onTrainingBatch(Trainer trainer, BatchData batchData) {
        if (trainer.getDevices().length != 1) {
            throw new IllegalStateException("data-parallel training across workers needs one device per trainer; this one has "
                    + trainer.getDevices().length + " (start one worker per device)");
        }
        synchronize(trainer.getModel().getBlock());
    }

    /** Replaces every trainable parameter's gradient with its mean over all workers; call between backward and step. */
    public void synchronize(Block block) {
        long start = System.nanoTime();
        List<TensorFusion.Bucket> buckets = prepare(block);
        // The step's agreement goes first and the buckets right behind it, without waiting for it.
        guarded(() -> aggregate(buckets, uneven.stepAsync(), true));
        steps++;
        unchecked++;
        aggregationNanos += System.nanoTime() - start;
    }

    /**
     * The mean over the {@code training} ranks of every bucket, written back as the gradients:
     * packed from them first when {@code read}, else the buckets' contents (zeros) go as they are.
     */
    private void aggregate(List<TensorFusion.Bucket> buckets, CompletableFuture<Integer> trainingRanks, boolean read) {
        FusedMean.average(allReduce, floats, floats, trainingRanks,
                b -> {
                    if (read) {
                        buckets.get(b).forEachTensor(GradientSynchronizer::readGradient);
                    }
                },
                b -> buckets.get(b).forEachTensor(GradientSynchronizer::writeGradient));
    }

    /** Runs a step of the protocol; after a failure the ranks are out of step, so the end-of-training check is skipped. */
    private void guarded(Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            failed = true;
            throw e;
        }
    }

    /** Synchronizations done so far (steps with data; shadowed steps of {@link #join} not counted). */
    public long steps() {
        return steps;
    }

    /** Time spent in {@link #synchronize}, packing and unpacking included. */
    public long aggregationNanos() {
        return aggregationNanos;
    }

    /** Bytes of gradient each synchronization aggregates; 0 before the first. */
    public long bytesPerStep() {
        return fusion == null ? 0 : fusion.buckets().stream().mapToLong(b -> (long) b.elements() * Float.BYTES).sum();
    }

    private List<TensorFusion.Bucket> prepare(Block block) {
        if (this.block == null) {
            GradientLayout layout = GradientLayout.trainable(block);
            layout.tensors().requireSameOnAllRanks(allReduce, "trainable parameters");
            this.fusion = new TensorFusion(layout, bucketBytes);
            this.floats = fusion.buckets().stream().map(TensorFusion.Bucket::floats).toList();
            this.block = block;
        } else if (this.block != block) {
            throw new IllegalStateException("this synchronizer serves one model's block; create one per model");
        }
        return fusion.buckets();
    }

    private static void readGradient(GradientLayout.Entry entry, ByteBuffer view) {
        try (NDArray gradient = entry.parameter().getArray().getGradient()) {
            // tryDirect: on PyTorch a view of the gradient's own memory, so this is the only copy.
            TensorFusion.copy(entry, gradient.toByteBuffer(true), view);
        }
    }

    private static void writeGradient(GradientLayout.Entry entry, ByteBuffer view) {
        try (NDArray gradient = entry.parameter().getArray().getGradient()) {
            gradient.set(view);
        }
    }
}
