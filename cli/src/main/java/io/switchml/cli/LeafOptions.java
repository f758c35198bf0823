package io.switchml.cli;

import io.switchml.client.SecretFiles;
import io.switchml.control.ControllerAddress;
import io.switchml.control.ControllerCredentials;
import io.switchml.controller.LeafRole;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/** The options of {@code switchml switch} that make it a leaf under a spine (docs/ARCHITECTURE.md section 9). */
final class LeafOptions {
    @Option(names = "--spine", paramLabel = "HOST:PORT",
            description = "Be a leaf of a two-level hierarchy under the spine switch whose controller is at HOST:PORT: serve"
                    + " this leaf's share of every job's ranks and join the spine for the rest (docs/ARCHITECTURE.md"
                    + " section 9). Needs --leaf-index and --leaves.")
    String spine;

    @Option(names = "--leaf-index", paramLabel = "I",
            description = "This leaf's index, 0..L-1: it serves ranks [I*n/L, (I+1)*n/L) of a job of n workers.")
    Integer leafIndex;

    @Option(names = "--leaves", paramLabel = "L", description = "How many leaves the hierarchy has.")
    Integer leaves;

    @Option(names = "--uplink-address", paramLabel = "IPV4",
            description = "This leaf's dataplane address as the spine sees it (default: --bind, or the local address of the"
                    + " route to the spine when --bind is 0.0.0.0).")
    String uplinkAddress;

    @Option(names = "--spine-tls-ca", paramLabel = "PEM",
            description = "A leaf: talk TLS to the spine's controller, trusting this CA (default: plaintext).")
    Path spineTlsCa;

    @Option(names = "--spine-tls-cert", paramLabel = "PEM",
            description = "A leaf: certificate to present to a spine that requires mutual TLS (with --spine-tls-key).")
    Path spineTlsCert;

    @Option(names = "--spine-tls-key", paramLabel = "PEM", description = "A leaf: PKCS#8 key of --spine-tls-cert.")
    Path spineTlsKey;

    @Option(names = "--spine-token-file", paramLabel = "FILE",
            description = "A leaf: file holding the spine's operator token (first line), which a spine started with"
                    + " --require-job-secrets accepts for every job's calls (default: none).")
    Path spineTokenFile;

    /** The leaf options, all or none: null when this switch is no leaf. */
    LeafRole role() {
        boolean credentials = spineTlsCa != null || spineTlsCert != null || spineTlsKey != null || spineTokenFile != null;
        if (spine == null && leafIndex == null && leaves == null && uplinkAddress == null && !credentials) {
            return null;
        }
        if (spine == null || leafIndex == null || leaves == null) {
            throw new IllegalArgumentException("a leaf needs --spine HOST:PORT, --leaf-index I and --leaves L together"
                    + (credentials ? " (the --spine-tls-* and --spine-token-file options are a leaf's)" : ""));
        }
        if ((spineTlsCert == null) != (spineTlsKey == null)) {
            throw new IllegalArgumentException("--spine-tls-cert and --spine-tls-key go together");
        }
        String token = spineTokenFile == null ? null : SecretFiles.read(spineTokenFile, "--spine-token-file");
        return new LeafRole(ControllerAddress.parse(spine), leafIndex, leaves, uplinkAddress,
                new ControllerCredentials(spineTlsCa, spineTlsCert, spineTlsKey, token, null));
    }

    /** For the ready line: which leaf this is, or nothing. */
    String describe() {
        return spine == null ? "" : ", leaf " + leafIndex + " of " + leaves + " under the spine at " + spine;
    }
}
