package io.switchml.launch;

import io.switchml.api.ReduceOp;
import io.switchml.collectives.Algorithm;
import io.switchml.collectives.TopKReference;

/**
 * {@code topk}: each worker sends the k largest-magnitude elements of its gradient plus its residual (error
 * feedback), exchanged by all-gather around the ring; it can carry momentum itself (DGC's momentum correction).
 */
public final class TopKAlgorithm extends TcpBaseline {
    public TopKAlgorithm() {
        super(Algorithm.TOPK);
    }

    @Override
    public String summary() {
        return "top-k sparsification with error feedback, all-gathered around the ring over TCP, no switch";
    }

    @Override
    public boolean correctsMomentum() {
        return true;
    }

    /**
     * The last of the context's rounds of the same tensors, every rank's residual starting at zero: the selection
     * spans the tensor, so every rank's compressor is replayed over all rounds, one rank at a time.
     */
    @Override
    public ExactSum exactSum(ExactSum.Context context) {
        return new ExactSum.Whole((inputOfRank, length) -> TopKReference.repeated(inputOfRank, context.workers(), length,
                context.rounds(), context.compression(), ReduceOp.SUM));
    }
}
