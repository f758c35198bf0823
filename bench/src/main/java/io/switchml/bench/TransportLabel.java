package io.switchml.bench;

import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.ResultDelivery;
import io.switchml.launch.AllReduceAlgorithm;
import java.util.function.UnaryOperator;

/**
 * Labels the rows of the algorithms that go through the embedded switch with how their workers
 * reached it during the row (see {@link ResultDelivery#transportSince}).
 */
final class TransportLabel implements UnaryOperator<BenchRow> {
    private final AggregationSwitch dataplane;
    private ResultDelivery last;

    TransportLabel(AggregationSwitch dataplane) {
        this.dataplane = dataplane;
        this.last = ResultDelivery.of(dataplane);
    }

    @Override
    public BenchRow apply(BenchRow row) {
        ResultDelivery before = last;
        last = ResultDelivery.of(dataplane);
        return AllReduceAlgorithm.named(row.algo()).needsSwitch() ? row.withTopology(last.transportSince(before)) : row;
    }
}
