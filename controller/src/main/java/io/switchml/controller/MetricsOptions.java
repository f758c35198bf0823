package io.switchml.controller;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Where and for whom the switch serves its metrics ({@link SwitchMetrics}): the address and port, a
 * bearer token scrapers must present (as Prometheus's {@code authorization} or {@code bearer_token_file}
 * sends it), TLS, and whether job names may appear in the metrics. Fluent setters, validated when
 * called; the defaults (loopback, no token, plain HTTP, job numbers only) suit a scraper on the switch's host.
 */
public final class MetricsOptions {
    public static final String DEFAULT_BIND = "127.0.0.1";

    private final String bind;
    private final int port;
    private byte[] tokenDigest;
    private Path tlsCertificate;
    private Path tlsKey;
    private boolean jobNames;

    /** @param port 0 picks a free port */
    public MetricsOptions(String bind, int port) {
        this.bind = Objects.requireNonNull(bind, "bind");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("metrics port " + port + " outside 0..65535");
        }
        this.port = port;
    }

    /** Every scrape must send {@code Authorization: Bearer TOKEN}. Only the token's digest is kept. */
    public MetricsOptions bearerToken(String token) {
        this.tokenDigest = Secrets.digest(Secrets.requireUsable(token, "metrics token"));
        return this;
    }

    /** Serves HTTPS with this certificate chain and its PKCS#8 private key (PEM, as for the controller). */
    public MetricsOptions tls(Path certificateChain, Path privateKey) {
        for (Path file : new Path[] {certificateChain, privateKey}) {
            if (file == null || !Files.isReadable(file)) {
                throw new IllegalArgumentException("metrics TLS: " + file + " is not a readable file");
            }
        }
        this.tlsCertificate = certificateChain;
        this.tlsKey = privateKey;
        return this;
    }

    /**
     * Whether the per-job metrics carry the job's name besides its number. Off by default: names can
     * say whose job it is, and the controller shows them only to the operator.
     */
    public MetricsOptions jobNames(boolean show) {
        this.jobNames = show;
        return this;
    }

    public String bind() {
        return bind;
    }

    public int port() {
        return port;
    }

    /** Null when scrapes need no token. */
    byte[] tokenDigest() {
        return tokenDigest;
    }

    public boolean tokenSet() {
        return tokenDigest != null;
    }

    public boolean tlsEnabled() {
        return tlsCertificate != null;
    }

    Path tlsCertificate() {
        return tlsCertificate;
    }

    Path tlsKey() {
        return tlsKey;
    }

    public boolean jobNames() {
        return jobNames;
    }

    /** Never shows the token, only whether there is one. */
    @Override
    public String toString() {
        return "MetricsOptions{bind=" + bind + ", port=" + port + ", token=" + (tokenSet() ? "set" : "none")
                + ", tls=" + (tlsEnabled() ? tlsCertificate : "off") + ", jobNames=" + jobNames + "}";
    }
}
