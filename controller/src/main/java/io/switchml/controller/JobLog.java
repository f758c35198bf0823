package io.switchml.controller;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lines about jobs that callers' calls cause (a job installed, ended, aborted, a join withdrawn, a
 * seat claimed twice, a SwitchML session replaced): at most {@link #PER_TENANT} a minute per tenant
 * ({@link Caller#tenantOf}) and {@link #TOTAL} in all, the rest counted and summed up once a minute
 * (security round 4: a churn of well-formed joins and leaves wrote 249 KB/s); the operator's calls
 * are not limited.
 */
final class JobLog {
    static final Duration INTERVAL = Duration.ofMinutes(1);
    static final int PER_TENANT = 30;
    static final int TOTAL = 200;
    private static final Logger LOG = LoggerFactory.getLogger(JobLog.class);

    private final PeerLogLimiter limiter;

    JobLog(PeerLogLimiter limiter) {
        this.limiter = limiter;
    }

    /** Counts go to this class's logger, written by {@code timer} once an interval. */
    static JobLog flushedBy(ScheduledExecutorService timer) {
        PeerLogLimiter limiter = new PeerLogLimiter("lines about jobs", INTERVAL, PER_TENANT, TOTAL, System::nanoTime,
                LOG::info);
        timer.scheduleAtFixedRate(limiter::flush, INTERVAL.toSeconds(), INTERVAL.toSeconds(), TimeUnit.SECONDS);
        return new JobLog(limiter);
    }

    /** {@code line} at info level on {@code log}, within {@code tenant}'s budget (null: the operator's, always). */
    void info(Logger log, String tenant, String line) {
        if (tenant == null) {
            log.info(line);
        } else {
            limiter.log(tenant, line, log::info);
        }
    }

    /** The same at warn level. */
    void warn(Logger log, String tenant, String line) {
        if (tenant == null) {
            log.warn(line);
        } else {
            limiter.log(tenant, line, log::warn);
        }
    }

    /** The dataplane's own lines about a job a caller caused (installed, removed), under its logger's name. */
    private static final Logger DATAPLANE = LoggerFactory.getLogger("io.switchml.dataplane.AggregationSwitch");

    /**
     * Where the dataplane writes its lines about a job of {@code tenant} (installed, removed): within the tenant's
     * budget like the controller's own (security round 5: they bypassed it).
     */
    java.util.function.Consumer<String> dataplaneLines(String tenant) {
        return line -> info(DATAPLANE, tenant, line);
    }

    /** Lines counted instead of written so far. */
    long suppressed() {
        return limiter.suppressed();
    }
}
