package io.switchml.bench;

import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.EmbeddedSwitch;
import io.switchml.launch.ResultDelivery;
import java.util.function.UnaryOperator;

/**
 * Labels the rows of the algorithms that go through the embedded switch with how their workers
 * reached it during the row (see {@link ResultDelivery#transportSince}).
 */
final class TransportLabel implements UnaryOperator<BenchRow> {
    private final EmbeddedSwitch embedded;
    private ResultDelivery last;

    TransportLabel(EmbeddedSwitch embedded) {
        this.embedded = embedded;
        this.last = embedded.delivery();
    }

    @Override
    public BenchRow apply(BenchRow row) {
        ResultDelivery before = last;
        last = embedded.delivery();
        return AllReduceAlgorithm.named(row.algo()).needsSwitch() ? row.withTopology(last.transportSince(before)) : row;
    }
}
