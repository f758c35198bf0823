package io.switchml.client;

import io.switchml.control.ControlChannel;
import io.switchml.control.WorkerCounter;
import io.switchml.controller.proto.WorkerTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Sends this rank's transport state (congestion window, RTTs, retransmissions: {@link WorkerStatistics}) to the
 * controller about once a second, so that {@code switchml ctl job} shows every rank's. A report that fails is
 * only logged: the next one follows, and the job does not depend on them.
 */
final class TransportReporter {
    private static final Logger LOG = LoggerFactory.getLogger(TransportReporter.class);
    static final Duration PERIOD = Duration.ofSeconds(1);

    private final ControlPlaneClient control;
    private final int jobNumber;
    private final long jobId;
    private final int rank;
    private final WorkerStatistics statistics;
    private ScheduledFuture<?> task;

    private TransportReporter(ControlPlaneClient control, int jobNumber, long jobId, int rank,
                              WorkerStatistics statistics) {
        this.control = control;
        this.jobNumber = jobNumber;
        this.jobId = jobId;
        this.rank = rank;
        this.statistics = statistics;
    }

    /** Reports now and then every {@link #PERIOD} on {@code scheduler} until {@link #stop()}. */
    static TransportReporter start(ControlPlaneClient control, int jobNumber, long jobId, int rank,
                                   WorkerStatistics statistics, ScheduledExecutorService scheduler) {
        TransportReporter reporter = new TransportReporter(control, jobNumber, jobId, rank, statistics);
        reporter.task = scheduler.scheduleAtFixedRate(reporter::report, 0, PERIOD.toMillis(), TimeUnit.MILLISECONDS);
        return reporter;
    }

    void stop() {
        task.cancel(false);
    }

    /** The state to report: every declared counter by its id, and the window, RTTs and transport. */
    static WorkerTransport transport(int rank, WorkerStatistics statistics) {
        WorkerStatistics.Snapshot s = statistics.snapshot();
        WorkerTransport.Builder b = WorkerTransport.newBuilder();
        for (WorkerCounter counter : WorkerCounter.values()) {
            b.putCounters(counter.id(), statistics.count(counter));
        }
        // The named counter fields are what controllers before the counters map read.
        return b.setRank(rank).setCongestionControl(s.congestionWindow() > 0)
                .setCongestionWindow(s.congestionWindow()).setBaseRttNs(s.baseRttNanos())
                .setSmoothedRttNs(s.smoothedRttNanos()).setPacketsSent(s.packetsSent())
                .setRetransmissions(s.retransmissions()).setWindowDelayDecreases(s.windowDelayDecreases())
                .setWindowLossDecreases(s.windowLossDecreases())
                .setRandomLosses(s.randomLosses()).setPacketsReceived(s.packetsReceived())
                .setBytesSent(s.bytesSent()).setBytesReceived(s.bytesReceived()).setAllReduces(s.operations())
                .setFailovers(s.failovers()).setTransport(statistics.transport()).build();
    }

    private void report() {
        control.reportTransport(jobNumber, jobId, rank, transport(rank, statistics), PERIOD)
                .whenComplete((ok, error) -> {
                    if (error != null) {
                        LOG.debug("rank {}: transport report to the controller failed: {}", rank,
                                ControlChannel.describe(error));
                    }
                });
    }
}
