package io.switchml.controller;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * What an operator should hear at start-up about a switch reachable beyond this host with its
 * control plane open (anyone who reaches the port could then join, read or end jobs), or its metrics.
 */
final class ExposureWarnings {
    private ExposureWarnings() {
    }

    static List<String> of(String controllerBind, ControllerSecurity security) {
        List<String> warnings = new ArrayList<>();
        if (loopback(controllerBind)) {
            return warnings;
        }
        if (!security.credentials() && !security.trustsOtherNetworks()) {
            // Protected mode: nobody beyond this host gets in, so no door is open; say why they are refused.
            warnings.add("the controller listens on " + controllerBind + " but, without credentials, takes calls from this"
                    + " host only (protected mode): workers on other hosts are refused until the switch is started with"
                    + " --trusted-networks SUBNET,... (or on), or with --operator-token-file or --tls-client-ca");
            return warnings;
        }
        String where = "the controller listens on " + controllerBind + " (beyond loopback)";
        if (!security.tlsEnabled()) {
            warnings.add(where + " without TLS: tokens, secrets and job details cross the network in clear text"
                    + " (--tls-cert/--tls-key, and --tls-client-ca for mutual TLS)");
        }
        if (!security.operatorTokenSet()) {
            warnings.add(where + " without an operator token: anyone who reaches it can list every job and read its"
                    + " details (--operator-token-file)");
        }
        if (!security.requireJobSecrets()) {
            // Leave, Watch, Barrier, Broadcast and ReportTransport need the job id that only the ranks' joins return;
            // the join itself is what stays open.
            warnings.add(where + " and jobs need no secret: the jobs of this project's launchers (bench, train, torchrun,"
                    + " the PyTorch backend, Spark) carry one, but anyone who reaches it can take a free seat of a job"
                    + " that has none (workers started by hand without switchml.jobSecretFile), and with it the job's id"
                    + " (its results, a share in its sums, and its end), or cancel such a job while it forms by claiming a"
                    + " seat already taken; leaving or aborting any job needs that id, which only its ranks hold"
                    + " (--require-job-secrets refuses jobs without a secret)");
        }
        if (security.switchmlSessions().everyone()) {
            warnings.add(where + " and SwitchML's session protocol, which has no credentials, is open to every address"
                    + " (--switchml-sessions off, or a list of subnets)");
        }
        return warnings;
    }

    /** The metrics endpoint's, when it is reachable beyond this host: open to all, or its token in clear text. */
    static List<String> ofMetrics(MetricsOptions options) {
        List<String> warnings = new ArrayList<>();
        if (loopback(options.bind())) {
            return warnings;
        }
        String where = "the metrics endpoint listens on " + options.bind() + " (beyond loopback)";
        if (!options.tokenSet()) {
            warnings.add(where + " without a token: anyone who reaches it can read the switch's counters"
                    + (options.jobNames() ? " and job names" : "") + " (--metrics-token-file)");
        } else if (!options.tlsEnabled()) {
            warnings.add(where + " without TLS: its bearer token crosses the network in clear text (--metrics-tls)");
        }
        return warnings;
    }

    /** A literal loopback address or localhost; never does a DNS lookup for anything else. */
    static boolean loopback(String bind) {
        if (bind.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (!bind.matches("[0-9a-fA-F:.]+")) {
            return false;
        }
        try {
            return InetAddress.getByName(bind).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
