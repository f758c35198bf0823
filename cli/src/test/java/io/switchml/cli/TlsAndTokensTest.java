package io.switchml.cli;

import io.switchml.api.ReduceOp;
import io.switchml.client.SecretFiles;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import io.switchml.controller.MetricsOptions;
import io.switchml.controller.SwitchMetrics;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A switch with mutual TLS, an operator token and required job secrets, set up with `switchml
 * certs`: ctl and workers with the right credentials get through; a plaintext client, a client
 * without a certificate, one trusting another CA, one with another CA's certificate and ctl without the
 * token are refused, each told which of its settings to change.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TlsAndTokensTest {
    private Path dir;
    private Path certs;
    private Path otherCerts;
    private AggregationService service;
    private String controller;

    @BeforeAll
    void start(@TempDir Path temp) throws Exception {
        dir = temp;
        certs = dir.resolve("certs");
        otherCerts = dir.resolve("other");
        for (Path d : List.of(certs, otherCerts)) {
            Run made = Run.of("certs", "--dir", d.toString());
            assertThat(made.exitCode()).as("certs; stderr: %s", made.err()).isZero();
        }
        assertThat(Files.getPosixFilePermissions(certs.resolve("server-key.pem")))
                .containsExactlyInAnyOrder(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
        service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0,
                new ControllerSecurity().tls(certs.resolve("server.pem"), certs.resolve("server-key.pem"))
                        .tlsClientCa(certs.resolve("ca.pem"))
                        .operatorToken(SecretFiles.read(certs.resolve("operator.token"), "token"))
                        .requireJobSecrets(true));
        controller = "127.0.0.1:" + service.controllerPort();
    }

    @AfterAll
    void stop() {
        if (service != null) {
            service.close();
        }
    }

    private List<String> tls(Path from) {
        return List.of("--tls-ca", from.resolve("ca.pem").toString(), "--tls-cert", from.resolve("client.pem").toString(),
                "--tls-key", from.resolve("client-key.pem").toString());
    }

    private Run ctl(List<String> options, String... command) {
        List<String> args = new ArrayList<>(List.of("ctl", "--controller", controller, "--timeout", "PT5S"));
        args.addAll(options);
        args.addAll(Arrays.asList(command));
        return Run.of(args.toArray(String[]::new));
    }

    private List<String> operator(Path from) {
        List<String> options = new ArrayList<>(tls(from));
        options.addAll(List.of("--token-file", certs.resolve("operator.token").toString()));
        return options;
    }

    @Test
    void ctlWithCertificateAndTokenGetsThrough() {
        Run jobs = ctl(operator(certs), "jobs");
        assertThat(jobs.exitCode()).as("stderr: %s", jobs.err()).isZero();
        Run drop = ctl(operator(certs), "drop", "--ingress", "0.5");
        assertThat(drop.exitCode()).isNotZero();
        assertThat(drop.err()).contains("--allow-fault-injection");
        assertThat(service.dataplane().ingressDropProbability()).isZero();
    }

    @Test
    void wrongOrMissingCredentialsAreRefused() {
        Run plaintext = ctl(List.of("--token-file", certs.resolve("operator.token").toString()), "jobs");
        assertThat(plaintext.exitCode()).as("plaintext against TLS").isNotZero();
        assertThat(plaintext.err()).contains("cannot reach the controller at " + controller)
                .contains("If it serves TLS, set --tls-ca (and --tls-cert and --tls-key if it requires client certificates)");

        List<String> noClientCertificate = List.of("--tls-ca", certs.resolve("ca.pem").toString(),
                "--token-file", certs.resolve("operator.token").toString());
        Run anonymous = ctl(noClientCertificate, "jobs");
        assertThat(anonymous.exitCode()).as("no client certificate (mutual TLS)").isNotZero();
        assertThat(anonymous.err()).contains("the switch at " + controller + " refused the TLS handshake: it requires a"
                + " client certificate signed by its client CA").contains("set --tls-cert and --tls-key");

        Run otherCa = ctl(operator(otherCerts), "jobs");
        assertThat(otherCa.exitCode()).as("a client of another CA, trusting another CA").isNotZero();
        assertThat(otherCa.err()).contains("the switch at " + controller + " presented a certificate this client does not"
                + " trust").contains("is it signed by the CA in --tls-ca");

        List<String> otherClientCertificate = List.of("--tls-ca", certs.resolve("ca.pem").toString(),
                "--tls-cert", otherCerts.resolve("client.pem").toString(),
                "--tls-key", otherCerts.resolve("client-key.pem").toString());
        Run stranger = ctl(otherClientCertificate, "jobs");
        assertThat(stranger.exitCode()).as("a client certificate of another CA").isNotZero();
        assertThat(stranger.err()).contains("the switch at " + controller + " refused the TLS handshake")
                .contains("it did not accept the client certificate in --tls-cert");

        Run noToken = ctl(tls(certs), "jobs");
        assertThat(noToken.exitCode()).isNotZero();
        assertThat(noToken.err()).contains("needs the operator token");

        Run wrongToken = ctl(operator(certs).subList(0, 6), "--token-file", otherCerts.resolve("operator.token").toString(),
                "jobs");
        assertThat(wrongToken.exitCode()).isNotZero();
        assertThat(wrongToken.err()).contains("operator token presented is wrong");
    }

    @Test
    void metricsOverTlsAnswerOnlyTheScraperWithTheToken() throws Exception {
        String token = SecretFiles.read(certs.resolve("operator.token"), "token");
        MetricsOptions options = new MetricsOptions("127.0.0.1", 0).bearerToken(token)
                .tls(certs.resolve("server.pem"), certs.resolve("server-key.pem"));
        try (SwitchMetrics metrics = SwitchMetrics.start(service, options)) {
            URI url = URI.create("https://127.0.0.1:" + metrics.port() + "/metrics");
            HttpClient trusting = HttpClient.newBuilder().sslContext(trusting(certs.resolve("ca.pem")))
                    .connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> anonymous = trusting.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(anonymous.statusCode()).isEqualTo(401);
            List<Socket> stalled = new ArrayList<>();
            try {
                // Handshakes that stop after the record header, and connections that send nothing at all, more than
                // the 16 that used to stop every scrape before any handshake or token: they hold no server thread.
                for (int i = 0; i < 68; i++) {
                    Socket socket = new Socket("127.0.0.1", metrics.port());
                    if (i < 4) {
                        socket.getOutputStream().write(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00});
                    }
                    stalled.add(socket);
                }
                HttpResponse<String> scraped = trusting.send(HttpRequest.newBuilder(url).header("Authorization", "Bearer " + token)
                        .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(scraped.statusCode()).isEqualTo(200);
                assertThat(scraped.body()).contains("switchml_packets_received_total");
            } finally {
                for (Socket socket : stalled) {
                    socket.close();
                }
            }

            HttpClient otherCa = HttpClient.newBuilder().sslContext(trusting(otherCerts.resolve("ca.pem")))
                    .connectTimeout(Duration.ofSeconds(5)).build();
            assertThatThrownBy(() -> otherCa.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString())).as("a scraper that does not trust the switch's CA")
                    .isInstanceOf(SSLHandshakeException.class);
            URI plain = URI.create("http://127.0.0.1:" + metrics.port() + "/metrics");
            assertThatThrownBy(() -> HttpClient.newHttpClient().send(HttpRequest.newBuilder(plain).header("Authorization",
                    "Bearer " + token).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()))
                    .as("plain HTTP to the HTTPS endpoint").isInstanceOf(IOException.class);
        }
    }

    /** A TLS context that trusts the CA in this PEM file only. */
    private static SSLContext trusting(Path ca) throws Exception {
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        try (InputStream in = Files.newInputStream(ca)) {
            trusted.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }

    @Test
    void aWorkerWithoutAClientCertificateIsToldWhichSettingsToSet() {
        SwitchMLConfig anonymous = SwitchMLConfig.builder().controller(controller).job("tls-job").workers(1).rank(0)
                .joinTimeout(Duration.ofSeconds(10)).tlsCa(certs.resolve("ca.pem")).build();
        assertThatThrownBy(() -> SwitchMLContext.connect(anonymous))
                .hasStackTraceContaining("cannot join job 'tls-job' as rank 0: the switch at " + controller
                        + " refused the TLS handshake: it requires a client certificate signed by its client CA (mutual"
                        + " TLS, the switch's --tls-client-ca), and this client presented none; set switchml.tlsCert and"
                        + " switchml.tlsKey");
    }

    @Test
    void workersWithTheIssuedSecretRunTheirJobOverTls() throws Exception {
        Path secret = dir.resolve("tls-job.secret");
        Run issued = ctl(operator(certs), "secret", "tls-job", "--out", secret.toString());
        assertThat(issued.exitCode()).as("stderr: %s", issued.err()).isZero();
        assertThat(issued.out()).doesNotContain(Files.readString(secret).trim());

        IntFunction<SwitchMLConfig.Builder> base = rank -> SwitchMLConfig.builder().controller(controller).job("tls-job")
                .workers(2).rank(rank).elementsPerPacket(256).joinTimeout(Duration.ofSeconds(30))
                .tlsCa(certs.resolve("ca.pem"))
                .tlsClientCertificate(certs.resolve("client.pem"), certs.resolve("client-key.pem"));
        assertThatThrownBy(() -> SwitchMLContext.connect(base.apply(0).jobSecret("a-guessed-secret-123456").build()))
                .hasStackTraceContaining("does not match");

        List<CompletableFuture<SwitchMLContext>> joining = IntStream.range(0, 2)
                .mapToObj(rank -> CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(base.apply(rank)
                        .jobSecretFile(secret).build())))
                .toList();
        List<SwitchMLContext> workers = joining.stream().map(CompletableFuture::join).toList();
        try {
            List<CompletableFuture<float[]>> reduced = workers.stream().map(ctx -> CompletableFuture.supplyAsync(() -> {
                float[] data = new float[5_000];
                Arrays.fill(data, ctx.rank() + 1);
                ctx.allReduce(data, ReduceOp.SUM);
                return data;
            })).toList();
            reduced.forEach(f -> assertThat(f.join()).containsOnly(3f));
        } finally {
            workers.forEach(SwitchMLContext::close);
        }
    }
}
