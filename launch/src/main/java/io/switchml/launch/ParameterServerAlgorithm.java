package io.switchml.launch;

import io.switchml.api.ReduceOp;
import io.switchml.collectives.Algorithm;
import io.switchml.collectives.ParameterServerReference;

/** {@code ps}: workers push shards to parameter servers (one in each worker's JVM), which sum in rank order. */
public final class ParameterServerAlgorithm extends TcpBaseline {
    public ParameterServerAlgorithm() {
        super(Algorithm.PARAMETER_SERVER);
    }

    @Override
    public String summary() {
        return "sharded parameter servers, one in each worker, over TCP; sums in rank order, no switch";
    }

    @Override
    protected boolean hostsServer() {
        return true;
    }

    /** Every element summed in rank order. */
    @Override
    public ExactSum exactSum(ExactSum.Context context) {
        return ExactSum.perElement(context.workers(), (values, index, length) ->
                ParameterServerReference.element(values, ReduceOp.SUM));
    }
}
