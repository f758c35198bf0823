package io.switchml.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code switchml certs}: a test CA with a server and a client certificate, and an operator token. */
@Command(name = "certs", mixinStandardHelpOptions = true,
        description = "Make a throwaway test CA and, signed by it, a certificate for the switch's controller and one for its"
                + " clients (mutual TLS), plus a random operator token: ca.pem, server.pem, server-key.pem, client.pem,"
                + " client-key.pem, operator.token in --dir. For production, use your own CA.")
final class CertsCommand implements Callable<Integer> {
    @Option(names = "--dir", required = true, paramLabel = "DIR", description = "Directory to write into (created if missing).")
    Path dir;

    @Option(names = "--host", split = ",", paramLabel = "NAME|IP",
            description = "Host names and IP addresses clients use to reach the controller (the server certificate's"
                    + " names; localhost and 127.0.0.1 are always in). Repeatable or comma-separated.")
    List<String> hosts = new ArrayList<>();

    @Option(names = "--days", defaultValue = "30", description = "Validity in days (default: ${DEFAULT-VALUE}).")
    int days;

    @Override
    public Integer call() throws IOException {
        if (days < 1) {
            throw new IllegalArgumentException("--days must be at least 1");
        }
        Files.createDirectories(dir);
        List<String> names = new ArrayList<>(List.of("localhost", "127.0.0.1"));
        hosts.stream().map(String::trim).filter(h -> !h.isEmpty() && !names.contains(h)).forEach(names::add);
        CertificateAuthority ca = CertificateAuthority.create("switchml test CA", Duration.ofDays(days));
        ca.write(dir, "ca");
        ca.server("switchml controller", names).write(dir, "server");
        ca.client("switchml client").write(dir, "client");
        byte[] token = new byte[32];
        new SecureRandom().nextBytes(token);
        PrivateFiles.write(dir.resolve("operator.token"),
                Base64.getUrlEncoder().withoutPadding().encodeToString(token) + "\n");
        System.out.println("wrote ca.pem, ca-key.pem, server.pem, server-key.pem, client.pem, client-key.pem and"
                + " operator.token to " + dir + " (server names " + names + ")");
        System.out.println("switch:  switchml switch --tls-cert " + dir.resolve("server.pem") + " --tls-key "
                + dir.resolve("server-key.pem") + " --tls-client-ca " + dir.resolve("ca.pem") + " --operator-token-file "
                + dir.resolve("operator.token"));
        System.out.println("ctl:     switchml ctl --tls-ca " + dir.resolve("ca.pem") + " --tls-cert " + dir.resolve("client.pem")
                + " --tls-key " + dir.resolve("client-key.pem") + " --token-file " + dir.resolve("operator.token") + " jobs");
        return 0;
    }
}
