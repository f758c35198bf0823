package io.switchml.controller;

import io.grpc.util.CertificateUtils;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.exporter.common.PrometheusHttpExchange;
import io.prometheus.metrics.exporter.common.PrometheusHttpRequest;
import io.prometheus.metrics.exporter.common.PrometheusHttpResponse;
import io.prometheus.metrics.exporter.common.PrometheusScrapeHandler;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.switchml.control.WorkerCounter;
import io.switchml.controller.proto.JobStatus;
import io.switchml.dataplane.AggregationSwitch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * The switch's metrics endpoint: {@code GET /metrics} in the Prometheus text format, over HTTP or
 * HTTPS. Every value is read when scraped, through callbacks, from what the switch and the controller
 * already keep; nothing is added to the per-packet path.
 *
 * <p>Metrics: {@code switchml_<counter>_total} for each switch counter (see
 * {@link AggregationSwitch#counters()}) except the refusals, which are {@code switchml_drops_total}
 * with a {@code reason} label; {@code switchml_jobs_installed}, {@code switchml_jobs_forming},
 * {@code switchml_job_workers{job_number}} (expected workers of each installed job; with a {@code job}
 * label too when {@link MetricsOptions#jobNames} allows it), {@code switchml_sessions_replaced_total{reason}}
 * (SwitchML sessions a newer run removed) and {@code switchml_drop_probability{direction}} (the drop simulator).
 *
 * <p>Who may scrape ({@link MetricsOptions}): the endpoint listens on one address (loopback unless the
 * operator says otherwise), asks for a bearer token when one is set, and answers {@code GET} and
 * {@code HEAD} of {@code /metrics} only (404 for other paths, 405 for other methods). It is served by
 * {@link MetricsServer}: one event-loop thread, whatever the connections; a connection whose request
 * (over HTTPS, its handshake too) is not whole within {@link #REQUEST_SECONDS} of its opening or of the
 * previous answer is closed; beyond {@link #MAX_CONNECTIONS} open at once, a new one closes the one that
 * has waited longest for its request. So connections that send nothing, held open and reopened, can
 * neither stop the scrapes nor stay.
 */
public final class SwitchMetrics implements AutoCloseable {
    /** The switch counters named drops_REASON become switchml_drops_total{reason="REASON"}. */
    private static final String DROP_PREFIX = "drops_";
    private static final String PREFIX = "switchml_";
    private static final String PATH = "/metrics";
    private static final String BEARER = "Bearer ";
    /**
     * Connections open at once; one more closes the connection that has waited longest for its request.
     * A connection costs a socket and a few KB, no thread.
     */
    static final int MAX_CONNECTIONS = 256;
    /** A request (and, over HTTPS, its handshake) must be whole this long after the connection opened or was last answered. */
    static final int REQUEST_SECONDS = 10;
    private static final Logger LOG = LoggerFactory.getLogger(SwitchMetrics.class);

    private final MetricsServer server;
    private final List<String> exposureWarnings;

    private SwitchMetrics(MetricsServer server, List<String> exposureWarnings) {
        this.server = server;
        this.exposureWarnings = exposureWarnings;
    }

    /**
     * Serves the service's metrics as {@code options} say until closed; warns (log and
     * {@link #exposureWarnings()}) when the endpoint is reachable beyond loopback without a token or TLS.
     *
     * @throws UncheckedIOException     when the port cannot be bound or the TLS files cannot be read
     * @throws IllegalArgumentException when the TLS files hold no usable certificate chain and key
     */
    public static SwitchMetrics start(AggregationService service, MetricsOptions options) {
        String where = options.bind() + ":" + options.port();
        SSLContext tls;
        try {
            tls = options.tlsEnabled() ? sslContext(options) : null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the metrics endpoint's TLS files " + options.tlsCertificate()
                    + " and " + options.tlsKey() + ": " + e.getMessage(), e);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot serve metrics over TLS with " + options.tlsCertificate() + " and "
                    + options.tlsKey() + " (a PEM certificate chain and its PKCS#8 key): " + e.getMessage(), e);
        }
        PrometheusRegistry registry = new PrometheusRegistry();
        register(registry, service.dataplane(), service.registry(), service.sessions(), options.jobNames());
        JvmMetrics.builder().register(registry); // heap, GC, threads, CPU of the switch's JVM
        Guard guard = new Guard(options.tokenDigest(), new PrometheusScrapeHandler(registry));
        try {
            MetricsServer server = new MetricsServer(new InetSocketAddress(options.bind(), options.port()),
                    tls == null ? null : new JdkSslContext(tls, false, ClientAuth.NONE),
                    Duration.ofSeconds(REQUEST_SECONDS), MAX_CONNECTIONS, guard::answer);
            List<String> warnings = ExposureWarnings.ofMetrics(options);
            warnings.forEach(w -> LOG.warn("security: {}", w));
            return new SwitchMetrics(server, warnings);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve metrics on " + where + ": " + e.getMessage(), e);
        }
    }

    /** The server's certificate chain and key (PEM, the key PKCS#8) as a TLS context. */
    private static SSLContext sslContext(MetricsOptions options) throws IOException, GeneralSecurityException {
        X509Certificate[] chain;
        PrivateKey key;
        try (InputStream certificates = Files.newInputStream(options.tlsCertificate());
             InputStream keyFile = Files.newInputStream(options.tlsKey())) {
            chain = CertificateUtils.getX509Certificates(certificates);
            key = CertificateUtils.getPrivateKey(keyFile);
        }
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setKeyEntry("metrics", key, new char[0], chain);
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, new char[0]);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), null, null);
        return context;
    }

    /** {@code GET} and {@code HEAD} of {@code /metrics}, with the token when one is set; nothing else. */
    private static final class Guard {
        private final byte[] tokenDigest;
        private final PrometheusScrapeHandler metrics;

        Guard(byte[] tokenDigest, PrometheusScrapeHandler metrics) {
            this.tokenDigest = tokenDigest;
            this.metrics = metrics;
        }

        FullHttpResponse answer(FullHttpRequest request) {
            if (!request.decoderResult().isSuccess()) {
                return text(request, HttpResponseStatus.BAD_REQUEST, "bad request: not an HTTP/1.1 request this endpoint reads");
            }
            HttpMethod method = request.method();
            String path = new QueryStringDecoder(request.uri()).path();
            if (!path.equals(PATH)) {
                return text(request, HttpResponseStatus.NOT_FOUND, "not found: this endpoint serves " + PATH + " only");
            }
            if (!method.equals(HttpMethod.GET) && !method.equals(HttpMethod.HEAD)) {
                FullHttpResponse refused = text(request, HttpResponseStatus.METHOD_NOT_ALLOWED,
                        "method not allowed: " + PATH + " answers GET and HEAD");
                refused.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
                return refused;
            }
            if (tokenDigest != null && !authorized(request.headers().get(HttpHeaderNames.AUTHORIZATION))) {
                FullHttpResponse refused = text(request, HttpResponseStatus.UNAUTHORIZED,
                        "unauthorized: scrapes need the bearer token of the switch's --metrics-token-file");
                refused.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"switchml\"");
                return refused;
            }
            if (method.equals(HttpMethod.HEAD)) {
                FullHttpResponse head = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
                head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
                        .setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
                return head;
            }
            Exchange exchange = new Exchange(request);
            try {
                metrics.handleRequest(exchange);
                return exchange.response();
            } catch (IOException | RuntimeException e) {
                exchange.body.buffer().release();
                LOG.warn("a scrape of the metrics failed: {}", e.toString());
                return text(request, HttpResponseStatus.INTERNAL_SERVER_ERROR, "the scrape failed: " + e.getMessage());
            }
        }

        /** Constant time in the token, as the controller's operator token ({@link Secrets}). */
        private boolean authorized(String authorization) {
            return authorization != null && authorization.startsWith(BEARER)
                    && Secrets.same(tokenDigest, Secrets.digest(authorization.substring(BEARER.length()).trim()));
        }

        private static FullHttpResponse text(FullHttpRequest request, HttpResponseStatus status, String text) {
            byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
            boolean head = request.method().equals(HttpMethod.HEAD);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                    head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, head ? 0 : body.length);
            return response;
        }
    }

    /** One scrape as the Prometheus library's handler sees it: the request, and the answer it writes. */
    private static final class Exchange implements PrometheusHttpExchange {
        private final FullHttpRequest request;
        private final QueryStringDecoder uri;
        private final ByteBufOutputStream body = new ByteBufOutputStream(Unpooled.buffer());
        private final io.netty.handler.codec.http.HttpHeaders headers = new io.netty.handler.codec.http.DefaultHttpHeaders();
        private int status = 200;

        Exchange(FullHttpRequest request) {
            this.request = request;
            this.uri = new QueryStringDecoder(request.uri());
        }

        FullHttpResponse response() {
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status),
                    body.buffer());
            response.headers().set(headers).setInt(HttpHeaderNames.CONTENT_LENGTH, body.buffer().readableBytes());
            return response;
        }

        @Override
        public PrometheusHttpRequest getRequest() {
            return new PrometheusHttpRequest() {
                @Override
                public String getQueryString() {
                    return uri.rawQuery().isEmpty() ? null : uri.rawQuery();
                }

                @Override
                public Enumeration<String> getHeaders(String name) {
                    return Collections.enumeration(request.headers().getAll(name));
                }

                @Override
                public String getMethod() {
                    return request.method().name();
                }

                @Override
                public String getRequestPath() {
                    return uri.path();
                }
            };
        }

        @Override
        public PrometheusHttpResponse getResponse() {
            return new PrometheusHttpResponse() {
                @Override
                public void setHeader(String name, String value) {
                    headers.set(name, value);
                }

                @Override
                public OutputStream sendHeadersAndGetBody(int statusCode, int contentLength) {
                    status = statusCode;
                    return body;
                }
            };
        }

        @Override
        public void handleException(IOException e) throws IOException {
            throw e;
        }

        @Override
        public void handleException(RuntimeException e) {
            throw e;
        }

        @Override
        public void close() {
        }
    }

    private static void register(PrometheusRegistry registry, AggregationSwitch dataplane, JobRegistry jobs,
                                 SwitchmlSessions sessions, boolean jobNames) {
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
        CounterWithCallback.builder().name(PREFIX + "foreign_job_calls")
                .help("Calls for a job their caller is no member of (a wrong or missing job id): a few after a restart,"
                        + " many from a guesser, who is refused beyond 10 a second per tenant.")
                .callback(cb -> cb.call(jobs.foreignJobCalls()))
                .register(registry);
        CounterWithCallback.builder().name(PREFIX + "log_lines_not_written")
                .help("Lines about jobs that callers caused beyond their share of the log (30 a minute per tenant, 200 in"
                        + " all), counted instead of written.")
                .callback(cb -> cb.call(jobs.logLinesNotWritten()))
                .register(registry);
        GaugeWithCallback.builder().name(PREFIX + "jobs_installed")
                .help("Jobs installed on the switch.")
                .callback(cb -> cb.call(jobs.jobs().size()))
                .register(registry);
        GaugeWithCallback.builder().name(PREFIX + "jobs_forming")
                .help("Jobs whose ranks are still joining.")
                .callback(cb -> cb.call(jobs.formingJobs().size()))
                .register(registry);
        // A job's name only with the operator's consent: the controller shows names only to the operator.
        GaugeWithCallback.builder().name(PREFIX + "job_workers")
                .help("Workers of each installed job.")
                .labelNames(jobNames ? new String[] {"job", "job_number"} : new String[] {"job_number"})
                .callback(cb -> {
                    List<JobStatus> installed = jobs.jobs();
                    for (JobStatus job : installed) {
                        String number = Integer.toString(job.getJobNumber());
                        if (jobNames) {
                            cb.call(job.getParameters().getNumWorkers(), job.getJobName(), number);
                        } else {
                            cb.call(job.getParameters().getNumWorkers(), number);
                        }
                    }
                })
                .register(registry);
        // Which tenant holds what of the switch (docs/security.md, "Fair shares"): a local user as "uid N (name)".
        String[] holdings = {"jobs", "slots", "register_bytes"};
        String[] holdingHelp = {"Running jobs", "Slots of the running jobs", "Register memory (bytes) of the running jobs"};
        for (int k = 0; k < holdings.length; k++) {
            int index = k;
            GaugeWithCallback.builder().name(PREFIX + "tenant_" + holdings[k])
                    .help(holdingHelp[k] + " of each tenant (a local user \"uid N (name)\", \"unknown local\", a client"
                            + " certificate's subject, an address); the operator's jobs are no tenant's.")
                    .labelNames("tenant")
                    .callback(cb -> jobs.tenantHoldings().forEach((tenant, h) -> cb.call(h[index], tenant)))
                    .register(registry);
        }
        CounterWithCallback.builder().name(PREFIX + "oversized_requests")
                .help("Requests that gRPC's transport refused before any service saw them (a header block or a message"
                        + " over the limits), counted instead of logged with a stack trace each; every switch of the JVM.")
                .callback(cb -> cb.call(TransportErrorLog.count()))
                .register(registry);
        CounterWithCallback.builder().name(PREFIX + "jobs_ended")
                .help("Jobs that ended since the switch started, by why: every rank left (left), a rank died"
                        + " (rank_failed), a leaf's spine went away (spine_lost), no rank was heard for the idle limit (idle), the"
                        + " operator ended it (operator).")
                .labelNames("reason")
                .callback(cb -> {
                    for (JobEndings.Reason reason : JobEndings.Reason.values()) {
                        cb.call(jobs.jobsEnded(reason), reason.label);
                    }
                })
                .register(registry);
        registerRankTransport(registry, jobs, jobNames);
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

    /**
     * Each running job's ranks, as they last reported (every second): packets and bytes sent and received,
     * all-reduces, failovers, retransmissions, random losses, congestion window and RTTs. Labelled by job number and rank (and job name with consent).
     */
    private static void registerRankTransport(PrometheusRegistry registry, JobRegistry jobs, boolean jobNames) {
        String[] labels = jobNames ? new String[] {"job", "job_number", "rank"} : new String[] {"job_number", "rank"};
        for (WorkerCounter counter : WorkerCounter.values()) { // declared once, for the workers and here
            CounterWithCallback.builder().name(PREFIX + "rank_" + counter.id())
                    .help(counter.help() + " (the rank's last transport report)").labelNames(labels)
                    .callback(cb -> jobs.rankTransports().forEach(r -> {
                        Long value = r.transport().getCountersMap().get(counter.id()); // absent from older workers' reports
                        if (value != null) {
                            cb.call(value, rankLabels(r, jobNames));
                        }
                    }))
                    .register(registry);
        }
        GaugeWithCallback.builder().name(PREFIX + "rank_congestion_window")
                .help("A rank's last congestion window in slots (0 with congestion control off).")
                .labelNames(labels)
                .callback(cb -> jobs.rankTransports().forEach(r -> cb.call(r.transport().getCongestionWindow(),
                        rankLabels(r, jobNames))))
                .register(registry);
        GaugeWithCallback.builder().name(PREFIX + "rank_smoothed_rtt_seconds")
                .help("A rank's smoothed round-trip time through the switch.")
                .labelNames(labels)
                .callback(cb -> jobs.rankTransports().forEach(r -> cb.call(r.transport().getSmoothedRttNs() / 1e9,
                        rankLabels(r, jobNames))))
                .register(registry);
    }

    private static String[] rankLabels(JobRegistry.RankTransport r, boolean jobNames) {
        String number = Integer.toString(r.jobNumber());
        String rank = Integer.toString(r.transport().getRank());
        return jobNames ? new String[] {r.jobName(), number, rank} : new String[] {number, rank};
    }

    /** The TCP port the endpoint listens on. */
    public int port() {
        return server.port();
    }

    /** Connections open now; for tests. */
    int openConnections() {
        return server.openConnections();
    }

    /** What was wrong with the protection of an endpoint reachable beyond loopback; empty when nothing. */
    public List<String> exposureWarnings() {
        return exposureWarnings;
    }

    @Override
    public void close() {
        server.close();
    }
}
