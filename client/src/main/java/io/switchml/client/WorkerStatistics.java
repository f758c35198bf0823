package io.switchml.client;

import io.switchml.control.WorkerCounter;

import java.util.concurrent.atomic.LongAdder;

/** Counters of one worker context, readable from any thread while it runs. */
public final class WorkerStatistics {
    /** One adder per declared counter ({@link WorkerCounter}); the fields below are their short names in this package. */
    private final LongAdder[] counters = new LongAdder[WorkerCounter.values().length];

    {
        for (int i = 0; i < counters.length; i++) {
            counters[i] = new LongAdder();
        }
    }

    final LongAdder packetsSent = counter(WorkerCounter.PACKETS_SENT);
    final LongAdder bytesSent = counter(WorkerCounter.SENT_BYTES);
    final LongAdder packetsReceived = counter(WorkerCounter.PACKETS_RECEIVED);
    final LongAdder bytesReceived = counter(WorkerCounter.RECEIVED_BYTES);
    final LongAdder retransmissions = counter(WorkerCounter.RETRANSMISSIONS);
    final LongAdder retransmissionTimeouts = counter(WorkerCounter.RETRANSMISSION_TIMEOUTS);
    final LongAdder duplicateResults = counter(WorkerCounter.DUPLICATE_RESULTS);
    final LongAdder malformedResults = counter(WorkerCounter.MALFORMED_RESULTS);
    /** Results whose tag was wrong, in a job with authenticated packets. */
    final LongAdder forgedResults = counter(WorkerCounter.FORGED_RESULTS);
    final LongAdder operations = counter(WorkerCounter.ALL_REDUCES);
    final LongAdder operationTimeouts = counter(WorkerCounter.ALL_REDUCE_TIMEOUTS);
    final LongAdder injectedDrops = counter(WorkerCounter.INJECTED_DROPS);
    final LongAdder injectedDuplicates = counter(WorkerCounter.INJECTED_DUPLICATES);
    final LongAdder injectedDelays = counter(WorkerCounter.INJECTED_DELAYS);
    final LongAdder failovers = counter(WorkerCounter.FAILOVERS);
    final LongAdder blocksKept = counter(WorkerCounter.BLOCKS_KEPT);
    final LongAdder blocksRedone = counter(WorkerCounter.BLOCKS_REDONE);
    final LongAdder blocksCopied = counter(WorkerCounter.BLOCKS_COPIED);
    final LongAdder windowDelayDecreases = counter(WorkerCounter.WINDOW_DELAY_DECREASES);
    final LongAdder windowLossDecreases = counter(WorkerCounter.WINDOW_LOSS_DECREASES);
    final LongAdder randomLosses = counter(WorkerCounter.RANDOM_LOSSES);
    /** Packets that waited for room in the shared-memory port's full request ring (written once it had room). */
    final LongAdder ipcRingFull = counter(WorkerCounter.IPC_RING_FULL);
    /** Float32 blocks sent as stand-ins, or not at all, because they were zero at every worker. */
    final LongAdder zeroBlocksSkipped = counter(WorkerCounter.ZERO_BLOCKS_SKIPPED);
    /** UDP datagrams that carried a run of packets for the kernel to cut (GSO). */
    final LongAdder segmentedDatagrams = counter(WorkerCounter.SEGMENTED_DATAGRAMS);
    /** UDP datagrams of results received, a run coalesced by GRO counting once. */
    final LongAdder datagramsReceived = counter(WorkerCounter.DATAGRAMS_RECEIVED);
    /** UDP datagrams written to the switch, a segmented one counting once. */
    final LongAdder datagramsSent = counter(WorkerCounter.DATAGRAMS_SENT);
    /** Worker threads whose runs the kernel refused, sending one datagram per packet since. */
    final LongAdder udpSegmentationOff = counter(WorkerCounter.UDP_SEGMENTATION_OFF);
    /** Worker threads whose socket the kernel refused UDP GRO. */
    final LongAdder udpGroOff = counter(WorkerCounter.UDP_GRO_OFF);

    /** The adder of a declared counter, for the code that counts its events. */
    LongAdder counter(WorkerCounter counter) {
        return counters[counter.ordinal()];
    }

    /** A declared counter's value now. */
    public long count(WorkerCounter counter) {
        return counters[counter.ordinal()].sum();
    }

    volatile long smoothedRttNanos;
    /** Congestion control: the last window and base RTT of any worker thread (0, -1 when off). */
    volatile double congestionWindow;
    /** How the worker threads reach the switch: "udp" or "ipc"; set when the session starts. */
    volatile String transport = "udp";
    volatile long baseRttNanos = -1;

    /** A consistent-enough copy for reporting. */
    /** How the worker threads reach the switch now: "udp", or "ipc" (the switch's shared-memory port). */
    public String transport() {
        return transport;
    }

    /** Packets that waited for room in the shared-memory port's full request ring. */
    public long ipcRingFull() {
        return count(WorkerCounter.IPC_RING_FULL);
    }

    /** Float32 blocks that were zero at every worker and went as one-element packets. */
    public long zeroBlocksSkipped() {
        return count(WorkerCounter.ZERO_BLOCKS_SKIPPED);
    }

    public Snapshot snapshot() {
        return new Snapshot(packetsSent.sum(), packetsReceived.sum(), retransmissions.sum(),
                retransmissionTimeouts.sum(), duplicateResults.sum(),
                malformedResults.sum(), operations.sum(), operationTimeouts.sum(), smoothedRttNanos,
                injectedDrops.sum(), injectedDuplicates.sum(), injectedDelays.sum(), failovers.sum(), blocksKept.sum(),
                blocksRedone.sum(), blocksCopied.sum(), bytesSent.sum(), congestionWindow, baseRttNanos,
                windowDelayDecreases.sum(), windowLossDecreases.sum(), randomLosses.sum(), bytesReceived.sum());
    }

    /**
     * @param packetsSent       packets sent, retransmissions included
     * @param packetsReceived   results received, duplicates included
     * @param retransmissions   packets sent again, found lost or as timeout probes
     * @param retransmissionTimeouts times no result arrived within the retransmission timeout
     * @param duplicateResults  results ignored as duplicates or leftovers of earlier operations
     * @param malformedResults  datagrams that were not well-formed results of this job
     * @param operations        all-reduces completed (successfully or not)
     * @param operationTimeouts all-reduces that failed because they exceeded the operation timeout
     * @param smoothedRttNanos  the last smoothed round-trip time of any worker thread
     * @param injectedDrops     datagrams (sent or received) dropped by fault injection ({@link FaultInjection})
     * @param injectedDuplicates datagrams (sent or received) duplicated by fault injection
     * @param injectedDelays    copies of datagrams delayed by fault injection
     * @param failovers         times the job moved to another switch or to the fallback ring
     * @param blocksKept        at failovers: blocks (one packet's elements) of unfinished all-reduces whose results every
     *                          worker already held, so they were not sent again
     * @param blocksRedone      at failovers: blocks no worker held, aggregated again from every worker's input
     * @param blocksCopied      at failovers: blocks some workers held and others did not, copied from the lowest rank
     *                          that held them (its result, through the new switch or ring; the others added zeros)
     * @param bytesSent         UDP payload bytes of the packets sent (headers and retransmissions included)
     * @param congestionWindow  with congestion control: the last window (slots in flight, with its fraction) of any
     *                          worker thread; 0 when it is off
     * @param baseRttNanos      with congestion control: the smallest RTT a worker thread saw; -1 when off or unknown
     * @param windowDelayDecreases times a window shrank because a round trip's smallest RTT stood above base RTT +
     *                             target delay
     * @param windowLossDecreases  times a window halved on a loss with evidence of congestion (a standing queue near
     *                             the target, or most of a round trip lost)
     * @param randomLosses         with congestion control: losses without evidence of congestion, which left the
     *                             window alone
     * @param bytesReceived        bytes of the results received (duplicates included)
     */
    public record Snapshot(long packetsSent, long packetsReceived, long retransmissions, long retransmissionTimeouts,
                           long duplicateResults,
                           long malformedResults, long operations, long operationTimeouts, long smoothedRttNanos,
                           long injectedDrops, long injectedDuplicates, long injectedDelays, long failovers,
                           long blocksKept, long blocksRedone, long blocksCopied, long bytesSent,
                           double congestionWindow, long baseRttNanos, long windowDelayDecreases,
                           long windowLossDecreases, long randomLosses, long bytesReceived) {
    }
}
