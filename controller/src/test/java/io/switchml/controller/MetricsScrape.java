package io.switchml.controller;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Reads a switch's {@code /metrics} on loopback as Prometheus does; for this module's tests and the integration tests. */
public final class MetricsScrape {
    private MetricsScrape() {
    }

    public static String scrape(int port) throws Exception {
        HttpResponse<String> response = request(port, "GET", "/metrics", null);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
        return response.body();
    }

    /** One request; {@code authorization} null for none. */
    public static HttpResponse<String> request(int port, String method, String path, String authorization) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10));
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The value of the sample line "{@code series} VALUE". */
    public static double value(String text, String series) {
        return text.lines().filter(l -> l.startsWith(series + " ")).findFirst()
                .map(l -> Double.parseDouble(l.substring(series.length() + 1).trim()))
                .orElseThrow(() -> new AssertionError("no sample " + series + " in\n" + text));
    }
}
