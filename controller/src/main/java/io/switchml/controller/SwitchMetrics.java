package io.switchml.controller;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.switchml.controller.proto.JobStatus;
import io.switchml.dataplane.AggregationSwitch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The switch's metrics endpoint: {@code /metrics} in the Prometheus text format, over HTTP. Every
 * value is read when scraped, through callbacks, from what the switch and the controller already
 * keep; nothing is added to the per-packet path.
 *
 * <p>Metrics: {@code switchml_<counter>_total} for each switch counter (see
 * {@link AggregationSwitch#counters()}) except the refusals, which are {@code switchml_drops_total}
 * with a {@code reason} label; {@code switchml_jobs_installed}, {@code switchml_jobs_forming},
 * {@code switchml_job_workers{job, job_number}} (expected workers of each installed job),
 * {@code switchml_sessions_replaced_total{reason}} (SwitchML sessions a newer run removed) and
 * {@code switchml_drop_probability{direction}} (the drop simulator).
 */
public final class SwitchMetrics implements AutoCloseable {
    /** The switch counters named drops_REASON become switchml_drops_total{reason="REASON"}. */
    private static final String DROP_PREFIX = "drops_";
    private static final String PREFIX = "switchml_";

    private final HTTPServer server;

    private SwitchMetrics(HTTPServer server) {
        this.server = server;
    }

    /**
     * Serves the service's metrics on {@code bind}:{@code port} (0 picks a free port) until closed.
     *
     * @throws UncheckedIOException when the port cannot be bound
     */
    public static SwitchMetrics start(AggregationService service, String bind, int port) {
        PrometheusRegistry registry = new PrometheusRegistry();
        register(registry, service.dataplane(), service.registry(), service.sessions());
        try {
            return new SwitchMetrics(HTTPServer.builder().hostname(bind).port(port).registry(registry).buildAndStart());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve metrics on " + bind + ":" + port + ": " + e.getMessage(), e);
        }
    }

    private static void register(PrometheusRegistry registry, AggregationSwitch dataplane, JobRegistry jobs,
                                 SwitchmlSessions sessions) {
        // The counter names are fixed when the switch starts; each callback reads the current values.
        for (String name : dataplane.counters().keySet()) {
            if (!name.startsWith(DROP_PREFIX)) {
                CounterWithCallback.builder().name(PREFIX + name)
                        .help("Switch counter " + name + ", summed over the switch's ports.")
                        .callback(cb -> cb.call(dataplane.counters().get(name)))
                        .register(registry);
            }
        }
        CounterWithCallback.builder().name(PREFIX + "drops")
                .help("Packets the switch refused without applying them, by reason.")
                .labelNames("reason")
                .callback(cb -> dataplane.counters().forEach((name, value) -> {
                    if (name.startsWith(DROP_PREFIX)) {
                        cb.call(value, name.substring(DROP_PREFIX.length()));
                    }
                }))
                .register(registry);
        GaugeWithCallback.builder().name(PREFIX + "jobs_installed")
                .help("Jobs installed on the switch.")
                .callback(cb -> cb.call(jobs.jobs().size()))
                .register(registry);
        GaugeWithCallback.builder().name(PREFIX + "jobs_forming")
                .help("Jobs whose ranks are still joining.")
                .callback(cb -> cb.call(jobs.formingJobs().size()))
                .register(registry);
        GaugeWithCallback.builder().name(PREFIX + "job_workers")
                .help("Workers of each installed job.")
                .labelNames("job", "job_number")
                .callback(cb -> {
                    List<JobStatus> installed = jobs.jobs();
                    for (JobStatus job : installed) {
                        cb.call(job.getParameters().getNumWorkers(), job.getJobName(), Integer.toString(job.getJobNumber()));
                    }
                })
                .register(registry);
        CounterWithCallback.builder().name(PREFIX + "sessions_replaced")
                .help("SwitchML sessions removed from the switch by a newer run: one that took a worker address of"
                        + " theirs (reason address_taken), or their own rank 0 registering again (reason restarted).")
                .labelNames("reason")
                .callback(cb -> {
                    cb.call(sessions.replacedSessions(), "address_taken");
                    cb.call(sessions.restartedSessions(), "restarted");
                })
                .register(registry);
        GaugeWithCallback.builder().name(PREFIX + "drop_probability")
                .help("The drop simulator's probability of dropping a packet on arrival (ingress) or a result on departure (egress).")
                .labelNames("direction")
                .callback(cb -> {
                    cb.call(dataplane.ingressDropProbability(), "ingress");
                    cb.call(dataplane.egressDropProbability(), "egress");
                })
                .register(registry);
    }

    /** The TCP port the endpoint listens on. */
    public int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        server.close();
    }
}
