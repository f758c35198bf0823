package io.switchml.client;

import io.switchml.api.ControlPlaneException;
import io.switchml.api.SwitchMLException;
import io.switchml.api.SwitchUnavailableException;
import io.switchml.api.WorkerFailedException;
import io.switchml.control.ControlChannel;
import io.switchml.controller.proto.JobEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * This rank's liveness at one switch (docs/ARCHITECTURE.md, section 6): the watch it holds at the
 * controller from join to close (a gRPC server stream on a connection with keepalive), and the
 * check made when a worker thread hears nothing from the switch for the failover detection time.
 * What it learns goes to its {@link Listener}: another rank died or left, or the switch is gone.
 */
final class JobWatch {
    private static final Logger LOG = LoggerFactory.getLogger(JobWatch.class);

    /** Where the watch reports; called on a gRPC thread. */
    interface Listener {
        /** The controller aborted the job because ranks died. */
        void ranksFailed(WorkerFailedException error);

        /** A rank left the job after finishing some all-reduces. */
        void rankLeft(JobEvent event);

        /** The switch is gone: its controller ended the watch, or it went silent and its controller cannot vouch for it. */
        void switchLost(SwitchUnavailableException error);
    }

    private final ControlPlaneClient control;
    private final SwitchMLConfig config;
    private final int jobNumber;
    private final long jobId;
    private final Listener listener;
    /** Whether a lost switch is taken over (failover): then its message need not say how to start again. */
    private final boolean failsOver;
    /** Completed once the controller has registered the watch. */
    private final CompletableFuture<Void> watching = new CompletableFuture<>();
    private volatile Runnable cancel;
    private volatile boolean ended;

    JobWatch(ControlPlaneClient control, SwitchMLConfig config, int jobNumber, long jobId, Listener listener,
             boolean failsOver) {
        this.control = control;
        this.config = config;
        this.jobNumber = jobNumber;
        this.jobId = jobId;
        this.listener = listener;
        this.failsOver = failsOver;
    }

    /** Opens the watch and waits until the controller has registered it (at most the join timeout). */
    void open() {
        cancel = control.watch(jobNumber, jobId, config.rank(), new ControlPlaneClient.WatchListener() {
            @Override
            public void event(JobEvent event) {
                jobEvent(event);
            }

            @Override
            public void ended(Throwable error) {
                watchEnded(error);
            }
        });
        try {
            watching.get(config.joinTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof SwitchMLException failure ? Failures.again(failure)
                    : new SwitchMLException(e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new ControlPlaneException("joined job '" + config.job() + "' as rank " + config.rank()
                    + ", but the controller at " + control.address() + " did not confirm this rank's watch within "
                    + config.joinTimeout().toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchMLException("interrupted while opening the watch of job '" + config.job() + "'", e);
        }
    }

    /** The job is lost: an {@link #open} still waiting fails with {@code error}. */
    void jobLost(SwitchMLException error) {
        watching.completeExceptionally(error);
    }

    /** Ends the watch without telling the listener (this rank closes or leaves). */
    void close() {
        ended = true;
        Runnable c = cancel;
        if (c != null) {
            c.run();
        }
    }

    private void jobEvent(JobEvent event) {
        switch (event.getKind()) {
            case WATCHING -> watching.complete(null);
            case RANKS_FAILED -> listener.ranksFailed(new WorkerFailedException(event.getJobName(), event.getJobNumber(),
                    event.getFailedRanksList(), config.rank(), event.getReason()));
            case RANK_LEFT -> listener.rankLeft(event);
            default -> LOG.debug("rank {} ignores job event {}", config.rank(), event.getKind());
        }
    }

    /** The watch ended without this rank leaving: the controller (the switch process) is gone. */
    private void watchEnded(Throwable error) {
        if (ended) {
            return;
        }
        String why = error == null ? "the controller ended this rank's watch" : ControlChannel.describe(error);
        listener.switchLost(new SwitchUnavailableException(lostMessage(why), error));
    }

    private String lostMessage(String why) {
        String lostSwitch = "job '" + config.job() + "' (job number " + jobNumber + "), rank " + config.rank()
                + ": lost the connection to the switch's controller at " + control.address() + " (" + why + ").";
        return failsOver ? lostSwitch : lostSwitch + " The switch process died, restarted or became"
                + " unreachable, and the job's state on the switch is gone; this context can no longer be used. To go on,"
                + " close this context on every worker and, once the switch is back, join again.";
    }

    /**
     * A worker thread got no result for the failover detection time. The switch is taken for lost
     * only when its controller cannot say otherwise: it does not answer, or no longer knows the job.
     * When it answers that the switch waits for other ranks, those ranks are slow, not the switch.
     */
    void switchSilent() {
        if (ended) {
            return;
        }
        long silentMs = config.failoverDetection().toMillis();
        control.diagnose(jobNumber, jobId, Duration.ofSeconds(2)).whenComplete((d, error) -> {
            String why;
            if (error != null) {
                why = "and its controller did not answer (" + ControlChannel.describe(error) + ")";
            } else if (!d.getKnown()) {
                why = "and its controller no longer knows the job";
            } else {
                LOG.debug("rank {}: no result for {} ms, but the controller knows job {} (missing ranks {}); waiting",
                        config.rank(), silentMs, jobNumber, d.getMissingRanksList());
                return;
            }
            listener.switchLost(new SwitchUnavailableException("job '" + config.job() + "' (job number " + jobNumber
                    + "), rank " + config.rank() + ": the switch at " + control.address() + " sent no result for "
                    + silentMs + " ms " + why + ".", error));
        });
    }
}
