package io.switchml.launch;

import io.switchml.api.ReduceOp;
import io.switchml.collectives.Algorithm;
import io.switchml.collectives.RingReference;

/** {@code ring}: Gloo's ring (reduce-scatter then all-gather, pipelined in segments) over TCP. */
public final class RingAlgorithm extends TcpBaseline {
    public RingAlgorithm() {
        super(Algorithm.RING);
    }

    @Override
    public String summary() {
        return "reduce-scatter then all-gather around the ring of workers over TCP (Gloo's ring), no switch";
    }

    /** Element i summed around the ring, starting at the rank whose chunk holds it. */
    @Override
    public ExactSum exactSum(ExactSum.Context context) {
        int workers = context.workers();
        return ExactSum.perElement(workers, (values, index, length) ->
                RingReference.element(values, RingReference.chunkOf(length, workers, index), ReduceOp.SUM));
    }
}
