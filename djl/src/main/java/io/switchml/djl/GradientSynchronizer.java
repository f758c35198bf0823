package io.switchml.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.nn.Block;
import ai.djl.training.Trainer;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.listener.TrainingListenerAdapter;
import io.switchml.client.AllReduce;
import io.switchml.client.Futures;
import io.switchml.client.ReduceOp;

import java.nio.ByteBuffer;
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
 */
public final class GradientSynchronizer extends TrainingListenerAdapter {
    private final AllReduce allReduce;
    private final long bucketBytes;
    private Block block;
    private TensorFusion fusion;
    private CompletableFuture<?>[] inFlight;
    private long steps;
    private long aggregationNanos;

    public GradientSynchronizer(AllReduce allReduce) {
        this(allReduce, TensorFusion.DEFAULT_BUCKET_BYTES);
    }

    /** @param bucketBytes the fusion threshold: gradients are aggregated in buckets of at most this many bytes */
    public GradientSynchronizer(AllReduce allReduce, long bucketBytes) {
        this.allReduce = allReduce;
        this.bucketBytes = bucketBytes;
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
        for (int b = 0; b < buckets.size(); b++) {
            TensorFusion.Bucket bucket = buckets.get(b);
            bucket.forEachTensor(GradientSynchronizer::readGradient);
            inFlight[b] = allReduce.allReduceAsync(bucket.floats(), bucket.floats(), ReduceOp.MEAN);
        }
        try {
            for (int b = 0; b < buckets.size(); b++) {
                Futures.await(inFlight[b]);
                buckets.get(b).forEachTensor(GradientSynchronizer::writeGradient);
            }
        } finally {
            java.util.Arrays.fill(inFlight, null);
        }
        steps++;
        aggregationNanos += System.nanoTime() - start;
    }

    /** Synchronizations done so far. */
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
            LayoutAgreement.require(allReduce, layout, "trainable parameters");
            this.fusion = new TensorFusion(layout, bucketBytes);
            this.inFlight = new CompletableFuture<?>[fusion.buckets().size()];
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
