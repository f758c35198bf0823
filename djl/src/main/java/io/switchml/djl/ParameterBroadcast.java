package io.switchml.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.nn.Block;
import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;

import java.nio.ByteBuffer;

/**
 * Gives every worker rank {@code root}'s parameters, bit for bit, so data-parallel training starts
 * from one state whatever each process's random initialization was. It runs through the same
 * all-reduce as the gradients (so it needs no other channel): {@code root} contributes its
 * parameters' raw bits as int32, every other worker zeros, and an integer sum of one value and
 * zeros is that value exactly, on the switch as on the baselines.
 */
public final class ParameterBroadcast {
    private ParameterBroadcast() {
    }

    /** Call on every worker after {@code trainer.initialize(...)} and before the first step. */
    public static void fromRank(AllReduce allReduce, Block block, int root) {
        fromRank(allReduce, block, root, TensorFusion.DEFAULT_BUCKET_BYTES);
    }

    public static void fromRank(AllReduce allReduce, Block block, int root, long bucketBytes) {
        if (root < 0 || root >= allReduce.workers()) {
            throw new IllegalArgumentException("root rank " + root + " outside 0.." + (allReduce.workers() - 1));
        }
        GradientLayout layout = GradientLayout.all(block);
        layout.tensors().requireSameOnAllRanks(allReduce, "parameters");
        boolean isRoot = allReduce.rank() == root;
        for (TensorFusion.Bucket bucket : new TensorFusion(layout, bucketBytes).buckets()) {
            if (isRoot) {
                bucket.forEachTensor((entry, view) -> TensorFusion.copy(entry, entry.parameter().getArray().toByteBuffer(true), view));
            }
            allReduce.allReduce(bucket.ints(), bucket.ints(), ReduceOp.SUM);
            if (!isRoot) {
                bucket.forEachTensor(ParameterBroadcast::write);
            }
        }
    }

    private static void write(GradientLayout.Entry entry, ByteBuffer view) {
        NDArray array = entry.parameter().getArray();
        array.set(view);
    }
}
