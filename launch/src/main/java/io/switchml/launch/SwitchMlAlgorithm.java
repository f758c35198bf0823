package io.switchml.launch;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLConnection;
import io.switchml.client.WorkerStatistics;
import io.switchml.control.WorkerCounter;
import io.switchml.collectives.Compression;

import java.util.Map;

/**
 * {@code switchml}: in-network aggregation. A worker joins the job at the switch its {@code switchml.*}
 * settings name, with the job secret its launcher gave it ({@link JobSecret}); the result is
 * block-floating-point, one exponent per packet ({@link ReferenceAllReduce}).
 */
public final class SwitchMlAlgorithm implements AllReduceAlgorithm {
    static final String ID = "switchml";

    @Override
    public String id() {
        return ID;
    }

    @Override
    public String summary() {
        return "in-network aggregation through a switch (UDP or shared memory), block floating point per packet";
    }

    @Override
    public boolean needsSwitch() {
        return true;
    }

    @Override
    public WorkerConnection open(Map<String, String> settings, Compression compression, WorkerConnection.PeerExchange peers) {
        SwitchMLConfig config = SwitchMLConfig.builder().settings(JobSecret.withLauncherSecret(settings, System.getenv())).build();
        SwitchMLConnection context = SwitchMLConnection.connect(config);
        return new WorkerConnection(context, () -> {
            WorkerStatistics statistics = context.statistics();
            WorkerStatistics.Snapshot s = statistics.snapshot();
            return new WorkerConnection.Counters(s.retransmissions(), s.packetsSent(), s.bytesSent(),
                    statistics.count(WorkerCounter.DATAGRAMS_SENT), statistics.count(WorkerCounter.PACKETS_RECEIVED),
                    statistics.count(WorkerCounter.DATAGRAMS_RECEIVED));
        }, context.config().elementsPerPacket(), context.config().lanes());
    }

    /** One exponent per packet's block: {@code elementsPerPacket} values, twice as many in 16-bit lanes. */
    @Override
    public ExactSum exactSum(ExactSum.Context context) {
        boolean sixteenBitLanes = context.laneBits() == 16;
        return new ExactSum.Blockwise(sixteenBitLanes ? 2 * context.elementsPerPacket() : context.elementsPerPacket(),
                (blocks, from, count, length, out) -> ReferenceAllReduce.floatBlock(blocks, count, ReduceOp.SUM,
                        sixteenBitLanes, out));
    }
}
