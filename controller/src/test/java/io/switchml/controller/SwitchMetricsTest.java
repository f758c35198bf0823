package io.switchml.controller;

import io.switchml.controller.proto.TransportReport;
import io.switchml.controller.proto.WorkerTransport;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import java.net.ConnectException;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.switchml.controller.MetricsScrape.request;
import static io.switchml.controller.MetricsScrape.scrape;
import static io.switchml.controller.MetricsScrape.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The switch's /metrics endpoint, scraped over HTTP as Prometheus does, and the scrapes it refuses. */
class SwitchMetricsTest extends ControllerTestSupport {

    @Test
    void metricsShowTheSwitchCountersDropsByReasonAndTheJobs() throws Exception {
        formJob("scraped", 2, 44_000);
        // A packet from an address no job has: received, then refused as an unknown source.
        try (DatagramSocket stranger = new DatagramSocket(0, InetAddress.getByName(LOOPBACK))) {
            sendPacket(stranger, 0, 0, 0, 0);
        }
        awaitCounter("drops_unknown_source", 1);

        try (SwitchMetrics metrics = SwitchMetrics.start(service, new MetricsOptions(LOOPBACK, 0).jobNames(true))) {
            String text = scrape(metrics.port());
            assertThat(text).contains("# TYPE switchml_packets_received_total counter")
                    .contains("# TYPE switchml_drops_total counter")
                    .as("the JVM's own metrics").contains("jvm_memory_used_bytes").contains("jvm_threads_current");
            assertThat(value(text, "switchml_packets_received_total")).isEqualTo(1);
            assertThat(value(text, "switchml_drops_total{reason=\"unknown_source\"}")).isEqualTo(1);
            assertThat(value(text, "switchml_drops_total{reason=\"truncated\"}")).isZero();
            assertThat(value(text, "switchml_results_sent_total")).isZero();
            assertThat(value(text, "switchml_jobs_installed")).isEqualTo(1);
            assertThat(value(text, "switchml_jobs_forming")).isZero();
            assertThat(value(text, "switchml_job_workers{job=\"scraped\",job_number=\"0\"}")).isEqualTo(2);
            assertThat(value(text, "switchml_drop_probability{direction=\"ingress\"}")).isZero();
            assertThat(value(text, "switchml_sessions_replaced_total{reason=\"address_taken\"}")).isZero();
            assertThat(value(text, "switchml_sessions_replaced_total{reason=\"restarted\"}")).isZero();
            // Every switch counter is there, under its name or as a drop reason.
            service.dataplane().counters().keySet().forEach(name -> assertThat(text).contains(name.startsWith("drops_")
                    ? "reason=\"" + name.substring("drops_".length()) + "\"" : "switchml_" + name + "_total "));

            service.dataplane().setDropProbabilities(0.5, 0);
            assertThat(value(scrape(metrics.port()), "switchml_drop_probability{direction=\"ingress\"}"))
                    .as("read at scrape time").isEqualTo(0.5);
        }
    }

    @Test
    void eachRanksTransportAndTheEndedJobsAreSeries() throws Exception {
        int number = formJob("reported", 2, 44_000);
        WorkerTransport report = WorkerTransport.newBuilder().setCongestionControl(true).setCongestionWindow(12.5)
                .setSmoothedRttNs(2_000_000).putCounters("packets_sent", 400).putCounters("retransmissions", 3)
                .putCounters("random_losses", 2).putCounters("packets_received", 390)
                .putCounters("sent_bytes", 400 * 8_224L).putCounters("received_bytes", 390 * 8_224L)
                .putCounters("all_reduces", 7).putCounters("failovers", 1).putCounters("zero_blocks_skipped", 9).build();
        for (int rank = 0; rank < 2; rank++) {
            stub().reportTransport(TransportReport.newBuilder().setJobNumber(number).setJobId(jobId(number)).setRank(rank)
                    .setTransport(report.toBuilder().putCounters("packets_sent", 400 + rank)).build());
        }
        try (SwitchMetrics metrics = SwitchMetrics.start(service, new MetricsOptions(LOOPBACK, 0))) {
            String text = scrape(metrics.port());
            assertThat(value(text, "switchml_rank_packets_sent_total{job_number=\"0\",rank=\"1\"}")).isEqualTo(401);
            assertThat(value(text, "switchml_rank_retransmissions_total{job_number=\"0\",rank=\"0\"}")).isEqualTo(3);
            assertThat(value(text, "switchml_rank_packets_received_total{job_number=\"0\",rank=\"1\"}")).isEqualTo(390);
            assertThat(value(text, "switchml_rank_sent_bytes_total{job_number=\"0\",rank=\"0\"}")).isEqualTo(400 * 8_224);
            assertThat(value(text, "switchml_rank_received_bytes_total{job_number=\"0\",rank=\"0\"}")).isEqualTo(390 * 8_224);
            assertThat(value(text, "switchml_rank_all_reduces_total{job_number=\"0\",rank=\"1\"}")).isEqualTo(7);
            assertThat(value(text, "switchml_rank_failovers_total{job_number=\"0\",rank=\"1\"}")).isEqualTo(1);
            assertThat(value(text, "switchml_rank_random_losses_total{job_number=\"0\",rank=\"0\"}")).isEqualTo(2);
            assertThat(value(text, "switchml_rank_zero_blocks_skipped_total{job_number=\"0\",rank=\"1\"}")).isEqualTo(9);
            assertThat(text).as("a counter the report does not carry is no series")
                    .doesNotContain("switchml_rank_ipc_ring_full_total{");
            assertThat(value(text, "switchml_rank_congestion_window{job_number=\"0\",rank=\"1\"}")).isEqualTo(12.5);
            assertThat(value(text, "switchml_rank_smoothed_rtt_seconds{job_number=\"0\",rank=\"0\"}")).isEqualTo(0.002);
            assertThat(value(text, "switchml_jobs_ended_total{reason=\"left\"}")).isZero();

            stub().leave(leave(number, 0));
            stub().leave(leave(number, 1));
            String after = scrape(metrics.port());
            assertThat(value(after, "switchml_jobs_ended_total{reason=\"left\"}")).isEqualTo(1);
            assertThat(value(after, "switchml_jobs_ended_total{reason=\"rank_failed\"}")).isZero();
            assertThat(after).as("an ended job's ranks are no series").doesNotContain("switchml_rank_packets_sent_total{");
        }
    }

    @Test
    void jobNamesAppearOnlyWithTheOperatorsConsent() throws Exception {
        formJob("team-a-secret-project", 2, 44_000);
        try (SwitchMetrics metrics = SwitchMetrics.start(service, new MetricsOptions(LOOPBACK, 0))) {
            String text = scrape(metrics.port());
            assertThat(value(text, "switchml_job_workers{job_number=\"0\"}")).isEqualTo(2);
            assertThat(text).doesNotContain("team-a-secret-project").doesNotContain("job=\"");
        }
    }

    @Test
    void onlyGetAndHeadOfMetricsAreAnswered() throws Exception {
        try (SwitchMetrics metrics = SwitchMetrics.start(service, new MetricsOptions(LOOPBACK, 0))) {
            HttpResponse<String> head = request(metrics.port(), "HEAD", "/metrics", null);
            assertThat(head.statusCode()).isEqualTo(200);
            assertThat(head.body()).isEmpty();
            for (String path : new String[] {"/", "/metricsx", "/metrics/x", "/-/healthy", "/anything"}) {
                HttpResponse<String> other = request(metrics.port(), "GET", path, null);
                assertThat(other.statusCode()).as("GET %s", path).isEqualTo(404);
                assertThat(other.body()).as("GET %s", path).doesNotContain("switchml_");
            }
            for (String method : new String[] {"POST", "PUT", "DELETE", "OPTIONS"}) {
                HttpResponse<String> other = request(metrics.port(), method, "/metrics", null);
                assertThat(other.statusCode()).as(method).isEqualTo(405);
                assertThat(other.headers().firstValue("Allow")).as(method).hasValue("GET, HEAD");
                assertThat(other.body()).as(method).doesNotContain("switchml_");
            }
            assertThat(scrape(metrics.port())).contains("switchml_packets_received_total");
        }
    }

    @Test
    void aScrapeWithoutTheBearerTokenIsRefused() throws Exception {
        String token = "metrics-token-0123456789abcdef";
        try (SwitchMetrics metrics = SwitchMetrics.start(service, new MetricsOptions(LOOPBACK, 0).bearerToken(token))) {
            for (String authorization : new String[] {null, "Bearer wrong-token-0123456789", "Basic " + token, token}) {
                HttpResponse<String> refused = request(metrics.port(), "GET", "/metrics", authorization);
                assertThat(refused.statusCode()).as("Authorization: %s", authorization).isEqualTo(401);
                assertThat(refused.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
                assertThat(refused.body()).doesNotContain("switchml_");
            }
            HttpResponse<String> scraped = request(metrics.port(), "GET", "/metrics", "Bearer " + token);
            assertThat(scraped.statusCode()).isEqualTo(200);
            assertThat(scraped.body()).contains("switchml_packets_received_total");
        }
    }

    @Test
    void halfOpenConnectionsDoNotStopTheScrapes() throws Exception {
        try (SwitchMetrics metrics = SwitchMetrics.start(service, new MetricsOptions(LOOPBACK, 0))) {
            List<Socket> halfOpen = halfOpen(metrics.port(), 10);
            try {
                HttpResponse<String> scraped = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                                URI.create("http://" + LOOPBACK + ":" + metrics.port() + "/metrics"))
                        .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(scraped.statusCode()).isEqualTo(200);
                assertThat(scraped.body()).contains("switchml_packets_received_total");
                // Silent or stopped in the request line, each is closed at its request deadline.
                for (int i = 0; i < halfOpen.size(); i++) {
                    assertThat(closedByServer(halfOpen.get(i))).as("half-open connection %d closed by the server", i).isTrue();
                }
            } finally {
                close(halfOpen);
            }
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void idleConnectionsHeldOpenAndReopenedNeitherStopTheScrapesNorStay() throws Exception {
        formJob("scraped-under-attack", 2, 44_000);
        try (SwitchMetrics metrics = SwitchMetrics.start(service, new MetricsOptions(LOOPBACK, 0));
             IdleConnections attack = new IdleConnections(metrics.port(), SwitchMetrics.MAX_CONNECTIONS + 64)) {
            long rssBefore = ProcessMemory.rssKb();
            int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
            attack.start();
            assertThat(attack.opened.await(60, TimeUnit.SECONDS)).as("the attack's connections open").isTrue();
            // Before: 16 such connections, reopened as they dropped, made every scrape fail.
            for (int i = 0; i < 20; i++) {
                String text = scrape(metrics.port());
                assertThat(value(text, "switchml_jobs_installed")).isEqualTo(1);
            }
            long metricsThreads = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith("switchml-metrics")).count();
            System.out.printf("metrics under %d idle connections (%d reopened): 20 scrapes answered; RSS %d -> %d kB,"
                            + " JVM threads %d -> %d, metrics threads %d, server connections %d%n", attack.count,
                    attack.reopened.get(), rssBefore, ProcessMemory.rssKb(), threadsBefore,
                    ManagementFactory.getThreadMXBean().getThreadCount(), metricsThreads, metrics.openConnections());
            assertThat(metricsThreads).as("threads serving the endpoint, whatever its connections").isEqualTo(1);

            // Left alone, the idle connections are closed by the server (at the request deadline or evicted).
            attack.stopReopening();
            assertThat(attack.allClosedByServer(Duration.ofSeconds(SwitchMetrics.REQUEST_SECONDS * 6L)))
                    .as("every idle connection closed by the server").isTrue();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (metrics.openConnections() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(metrics.openConnections()).as("connections the server holds").isZero();
            assertThat(scrape(metrics.port())).contains("switchml_packets_received_total");
        }
    }

    /**
     * Connections that never send a byte, as many as asked, reopened as the server closes them until
     * told to stop: one selector thread watches them all.
     */
    static final class IdleConnections implements AutoCloseable {
        final int count;
        final CountDownLatch opened = new CountDownLatch(1);
        final AtomicInteger reopened = new AtomicInteger();
        private final InetSocketAddress server;
        private final Selector selector;
        private final AtomicBoolean reopening = new AtomicBoolean(true);
        private final AtomicBoolean stopped = new AtomicBoolean();
        private final AtomicInteger stillOpen = new AtomicInteger();
        private final Thread thread;

        IdleConnections(int port, int count) throws IOException {
            this.count = count;
            this.server = new InetSocketAddress(LOOPBACK, port);
            this.selector = Selector.open();
            this.thread = new Thread(this::run, "test-idle-connections");
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        void stopReopening() {
            reopening.set(false);
        }

        /** Whether the server closed every connection within {@code timeout}. */
        boolean allClosedByServer(Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (stillOpen.get() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            return stillOpen.get() == 0;
        }

        private void open() throws IOException {
            SocketChannel channel = SocketChannel.open(server);
            channel.configureBlocking(false);
            channel.register(selector, SelectionKey.OP_READ);
            stillOpen.incrementAndGet();
        }

        private void run() {
            ByteBuffer sink = ByteBuffer.allocate(1024);
            try {
                for (int i = 0; i < count; i++) {
                    open();
                }
                opened.countDown();
                while (!stopped.get()) {
                    selector.select(100);
                    for (SelectionKey key : selector.selectedKeys()) {
                        SocketChannel channel = (SocketChannel) key.channel();
                        int read;
                        try {
                            sink.clear();
                            read = channel.read(sink);
                        } catch (IOException reset) {
                            read = -1;
                        }
                        if (read < 0) {
                            key.cancel();
                            channel.close();
                            stillOpen.decrementAndGet();
                            if (reopening.get()) {
                                open();
                                reopened.incrementAndGet();
                            }
                        }
                    }
                    selector.selectedKeys().clear();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() throws IOException, InterruptedException {
            stopped.set(true);
            selector.wakeup();
            thread.join(10_000);
            for (SelectionKey key : selector.keys()) {
                key.channel().close();
            }
            selector.close();
        }
    }

    /** Connections that never finish a request: half say nothing, half stop in the request line. */
    private static List<Socket> halfOpen(int port, int count) throws IOException {
        List<Socket> sockets = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Socket socket = new Socket(LOOPBACK, port);
            sockets.add(socket);
            if (sentHalfARequest(i)) {
                socket.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x".getBytes(StandardCharsets.US_ASCII));
                socket.getOutputStream().flush();
            }
        }
        return sockets;
    }

    /** Whether the server ends this connection (end of stream or reset) within a minute. */
    private static boolean closedByServer(Socket socket) throws IOException {
        socket.setSoTimeout(60_000);
        try {
            while (socket.getInputStream().read() >= 0) {
                // whatever it says before it closes
            }
            return true;
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (SocketException reset) {
            return true;
        }
    }

    private static boolean sentHalfARequest(int connection) {
        return connection % 2 == 1;
    }

    private static void close(List<Socket> sockets) throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
    }

    @Test
    void theEndpointListensOnTheChosenAddressOnly() throws Exception {
        try (SwitchMetrics metrics = SwitchMetrics.start(service, new MetricsOptions(LOOPBACK, 0))) {
            assertThat(metrics.exposureWarnings()).isEmpty();
            InetAddress other = NetworkInterface.networkInterfaces()
                    .filter(nic -> !nicIsLoopback(nic))
                    .flatMap(NetworkInterface::inetAddresses).filter(a -> a instanceof Inet4Address).findFirst().orElse(null);
            assumeTrue(other != null, "this host has no IPv4 address beside loopback");
            try (Socket socket = new Socket()) {
                assertThatThrownBy(() -> socket.connect(new InetSocketAddress(other, metrics.port()), 5_000))
                        .as("connecting on %s", other).isInstanceOf(ConnectException.class);
            }
        }
        try (SwitchMetrics open = SwitchMetrics.start(service, new MetricsOptions("0.0.0.0", 0))) {
            assertThat(open.exposureWarnings()).singleElement().asString()
                    .contains("the metrics endpoint listens on 0.0.0.0 (beyond loopback) without a token")
                    .contains("--metrics-token-file");
        }
        try (SwitchMetrics clearText = SwitchMetrics.start(service, new MetricsOptions("0.0.0.0", 0)
                .bearerToken("metrics-token-0123456789abcdef"))) {
            assertThat(clearText.exposureWarnings()).singleElement().asString()
                    .contains("without TLS: its bearer token crosses the network in clear text (--metrics-tls)");
        }
    }

    private static boolean nicIsLoopback(NetworkInterface nic) {
        try {
            return nic.isLoopback() || !nic.isUp();
        } catch (SocketException e) {
            return true;
        }
    }
}
