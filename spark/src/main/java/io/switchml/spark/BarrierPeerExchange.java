package io.switchml.spark;

import io.switchml.launch.PeerEndpoints;
import io.switchml.launch.WorkerConnection;
import org.apache.spark.BarrierTaskContext;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The TCP baselines' endpoint exchange between the tasks of a barrier stage: every task gathers every task's
 * {@code ENDPOINT} line with {@link BarrierTaskContext#allGather}, which returns them in partition (= rank) order.
 */
final class BarrierPeerExchange implements WorkerConnection.PeerExchange {
    private final BarrierTaskContext context;

    BarrierPeerExchange(BarrierTaskContext context) {
        this.context = context;
    }

    @Override
    public PeerEndpoints exchange(PeerEndpoints.Endpoint mine) {
        String[] lines = context.allGather(mine.toLine());
        List<InetSocketAddress> workers = new ArrayList<>();
        List<InetSocketAddress> servers = new ArrayList<>();
        for (int r = 0; r < lines.length; r++) {
            PeerEndpoints.Endpoint e = PeerEndpoints.Endpoint.parse(lines[r]);
            if (e == null || e.rank() != r) {
                throw new IllegalStateException("task " + r + " of the barrier stage sent '" + lines[r]
                        + "', not its ENDPOINT line for rank " + r);
            }
            workers.add(e.worker());
            if (e.server() != null) {
                servers.add(e.server());
            }
        }
        return new PeerEndpoints(workers, servers);
    }
}
