package io.switchml.bench;

import io.switchml.dataplane.AggregationSwitch;
import io.switchml.launch.AllReduceAlgorithm;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Labels the rows of the algorithms that go through the embedded switch with how their workers
 * reached it, as the switch counted it during the row: {@code shared-memory} (every result written
 * to a job's board on its shared-memory port), {@code udp}, or both.
 */
final class TransportLabel implements UnaryOperator<BenchRow> {
    private final AggregationSwitch dataplane;
    private long ipcResults;
    private long udpResults;

    TransportLabel(AggregationSwitch dataplane) {
        this.dataplane = dataplane;
        read();
    }

    @Override
    public BenchRow apply(BenchRow row) {
        long ipcBefore = ipcResults;
        long udpBefore = udpResults;
        read();
        if (!AllReduceAlgorithm.named(row.algo()).needsSwitch()) {
            return row;
        }
        boolean ipc = ipcResults > ipcBefore;
        boolean udp = udpResults > udpBefore;
        return row.withTopology(ipc && udp ? "shared-memory+udp" : ipc ? "shared-memory" : udp ? "udp" : null);
    }

    private void read() {
        Map<String, Long> counters = dataplane.counters();
        ipcResults = counters.getOrDefault("ipc_results", 0L);
        udpResults = counters.getOrDefault("packets_sent", 0L);
    }
}
