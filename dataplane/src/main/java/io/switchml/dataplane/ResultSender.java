package io.switchml.dataplane;

import java.nio.ByteBuffer;

/**
 * The switch program's egress: replicates a result to its recipients, passes each copy through the
 * egress drop simulator and hands it to the sink. A result for slot s goes to the port of worker
 * thread {@code s / slotsPerThread} on each worker.
 */
final class ResultSender {
    private final ResultSink sink;
    private final DropSimulator dropSimulator;
    private final SwitchCounters counters;

    ResultSender(ResultSink sink, DropSimulator dropSimulator, SwitchCounters counters) {
        this.sink = sink;
        this.dropSimulator = dropSimulator;
        this.counters = counters;
    }

    /** Sends a completed slot's result to every worker of the job. */
    void multicast(InstalledJob job, int thread, ByteBuffer result) {
        WorkerAddresses addresses = job.addresses();
        for (int rank = 0; rank < addresses.workers(); rank++) {
            send(job, rank, thread, result);
        }
        counters.increment(SwitchCounter.RESULTS_SENT);
    }

    /** Sends a stored result to the one worker that retransmitted its contribution. */
    void unicast(InstalledJob job, int rank, int thread, ByteBuffer result) {
        send(job, rank, thread, result);
        counters.increment(SwitchCounter.RETRANSMISSIONS_ANSWERED);
    }

    private void send(InstalledJob job, int rank, int thread, ByteBuffer result) {
        if (dropSimulator.dropAtEgress()) {
            counters.increment(SwitchCounter.EGRESS_SIMULATED_DROPS);
        } else if (sink.send(job.addresses().address(rank, thread), result)) {
            counters.increment(SwitchCounter.PACKETS_SENT);
        } else {
            counters.increment(SwitchCounter.EGRESS_QUEUE_FULL_DROPS);
        }
    }
}
