package io.switchml.dataplane;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * The switch program's egress: replicates a result to its recipients, passes each copy through the
 * egress drop simulator and hands it to the sink. A result for slot s goes to the port of worker
 * thread {@code s / slotsPerThread} on each worker; on a worker matched by address alone
 * (SwitchML's), to the source port of the packet that produced the result, as SwitchML's switch
 * swaps the UDP ports (SwitchML workers use the same port for the same slot).
 */
final class ResultSender {
    private final ResultSink sink;
    private final DropSimulator dropSimulator;
    private final SwitchCounters counters;
    private final ReplyAddresses replyAddresses = new ReplyAddresses();

    ResultSender(ResultSink sink, DropSimulator dropSimulator, SwitchCounters counters) {
        this.sink = sink;
        this.dropSimulator = dropSimulator;
        this.counters = counters;
    }

    /**
     * Sends a completed slot's result to every worker of the job; {@code sourcePort}: of the last
     * contribution. Co-located workers that read the job's board get it there, written once for all.
     */
    void multicast(InstalledJob job, int slot, int thread, int sourcePort, ByteBuffer result) {
        WorkerAddresses addresses = job.addresses();
        IpcDirectory.JobFiles board = job.ipcFiles();
        boolean published = false;
        for (int rank = 0; rank < addresses.workers(); rank++) {
            if (board != null && board.results().attached(rank)) {
                if (!published) {
                    publish(board, slot, result);
                    published = true;
                }
                wakeUp(board, addresses, rank, thread);
            } else {
                send(addresses, rank, thread, sourcePort, result);
            }
        }
        counters.increment(SwitchCounter.RESULTS_SENT);
    }

    /** Sends a stored result to the one worker that retransmitted its contribution. */
    void unicast(InstalledJob job, int rank, int slot, int thread, int sourcePort, ByteBuffer result) {
        IpcDirectory.JobFiles board = job.ipcFiles();
        if (board != null && board.results().attached(rank)) {
            publish(board, slot, result); // the same bytes again: its readers see a duplicate
            wakeUp(board, job.addresses(), rank, thread);
        } else {
            send(job.addresses(), rank, thread, sourcePort, result);
        }
        counters.increment(SwitchCounter.RETRANSMISSIONS_ANSWERED);
    }

    private void publish(IpcDirectory.JobFiles board, int slot, ByteBuffer result) {
        board.results().publish(slot, result);
        counters.increment(SwitchCounter.IPC_RESULTS);
    }

    private void wakeUp(IpcDirectory.JobFiles board, WorkerAddresses addresses, int rank, int thread) {
        if (board.results().takeWakeUp(rank, thread)) {
            InetSocketAddress worker = addresses.address(rank, thread);
            if (worker != null) {
                sink.wakeUp(worker);
                counters.increment(SwitchCounter.IPC_WAKE_UPS);
            }
        }
    }

    /** Sends a leaf's partial result (written over the packet) up to the spine port of the slot's thread. */
    void toSpine(Uplink uplink, int thread, ByteBuffer partial) {
        emit(uplink.spine(thread), partial);
        counters.increment(SwitchCounter.PARTIALS_FORWARDED);
    }

    private void send(WorkerAddresses addresses, int rank, int thread, int sourcePort, ByteBuffer result) {
        InetSocketAddress recipient = addresses.address(rank, thread);
        if (recipient == null) {
            recipient = replyAddresses.of(addresses.ipv4(rank), sourcePort);
        }
        emit(recipient, result);
    }

    private void emit(InetSocketAddress recipient, ByteBuffer result) {
        if (dropSimulator.dropAtEgress()) {
            counters.increment(SwitchCounter.EGRESS_SIMULATED_DROPS);
        } else if (sink.send(recipient, result)) {
            counters.increment(SwitchCounter.PACKETS_SENT);
        } else {
            counters.increment(SwitchCounter.EGRESS_QUEUE_FULL_DROPS);
        }
    }
}
