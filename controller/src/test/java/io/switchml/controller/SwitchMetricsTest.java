package io.switchml.controller;

import org.junit.jupiter.api.Test;

import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The switch's /metrics endpoint, scraped over HTTP as Prometheus does. */
class SwitchMetricsTest extends ControllerTestSupport {

    @Test
    void metricsShowTheSwitchCountersDropsByReasonAndTheJobs() throws Exception {
        formJob("scraped", 2, 44_000);
        // A packet from an address no job has: received, then refused as an unknown source.
        try (DatagramSocket stranger = new DatagramSocket(0, InetAddress.getByName(LOOPBACK))) {
            sendPacket(stranger, 0, 0, 0, 0);
        }
        awaitCounter("drops_unknown_source", 1);

        try (SwitchMetrics metrics = SwitchMetrics.start(service, LOOPBACK, 0)) {
            String text = scrape(metrics.port());
            assertThat(text).contains("# TYPE switchml_packets_received_total counter")
                    .contains("# TYPE switchml_drops_total counter");
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

    static String scrape(int port) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://" + LOOPBACK + ":" + port + "/metrics"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
        return response.body();
    }

    /** The value of the sample line "{@code series} VALUE". */
    static double value(String text, String series) {
        return text.lines().filter(l -> l.startsWith(series + " ")).findFirst()
                .map(l -> Double.parseDouble(l.substring(series.length() + 1).trim()))
                .orElseThrow(() -> new AssertionError("no sample " + series + " in\n" + text));
    }
}
