package io.switchml.cli;

import io.switchml.client.SecretFiles;
import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import io.switchml.controller.MetricsOptions;
import io.switchml.controller.NetworkPolicy;
import io.switchml.controller.SwitchMetrics;
import io.switchml.dataplane.SwitchConfig;
import io.switchml.protocol.ProtocolConstants;
import io.switchml.udp.Offload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;

/** Runs the switch with its embedded controller until interrupted. */
@Command(name = "switch", mixinStandardHelpOptions = true,
        description = "Run a software aggregation switch with its embedded controller (a whole aggregation service).")
final class SwitchCommand implements Callable<Integer> {
    @Option(names = "--bind", defaultValue = "0.0.0.0", description = "Address the dataplane listens on (default: ${DEFAULT-VALUE}).")
    String bind;

    @Option(names = "--port", defaultValue = "" + ProtocolConstants.SWITCH_UDP_PORT,
            description = "First UDP port of the dataplane (default: ${DEFAULT-VALUE}, SwitchML's 0xBEE0).")
    int port;

    @Option(names = "--ports", defaultValue = "1",
            description = "Number of UDP ports (one receive thread each; worker thread t uses port t mod ports; default: ${DEFAULT-VALUE}).")
    int ports;

    @Option(names = "--controller-bind", defaultValue = "0.0.0.0", description = "Address the controller listens on (default: ${DEFAULT-VALUE}).")
    String controllerBind;

    @Option(names = "--controller-port", defaultValue = "" + ProtocolConstants.CONTROLLER_TCP_PORT,
            description = "TCP port of the controller (gRPC; default: ${DEFAULT-VALUE}, as SwitchML's).")
    int controllerPort;

    @Option(names = "--ingress-drop", defaultValue = "0",
            description = "Probability of dropping a packet on arrival (drop simulator; needs --allow-fault-injection).")
    double ingressDrop;

    @Option(names = "--egress-drop", defaultValue = "0",
            description = "Probability of dropping each result sent (drop simulator; needs --allow-fault-injection).")
    double egressDrop;

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = "Serve Prometheus metrics on http://METRICS-BIND:PORT/metrics (0 picks a free port, printed"
                    + " before the ready line; default: off).")
    Integer metricsPort;

    @Option(names = "--metrics-bind", paramLabel = "ADDRESS", defaultValue = MetricsOptions.DEFAULT_BIND,
            description = "Address the metrics endpoint listens on (default: ${DEFAULT-VALUE}, this host only; 0.0.0.0 for"
                    + " every address).")
    String metricsBind;

    @Option(names = "--metrics-token-file", paramLabel = "FILE",
            description = "File holding the bearer token (first line) every scrape must send as `Authorization: Bearer"
                    + " TOKEN` (Prometheus: authorization.credentials_file); default: none.")
    Path metricsTokenFile;

    @Option(names = "--metrics-tls",
            description = "Serve the metrics over HTTPS with the controller's --tls-cert and --tls-key.")
    boolean metricsTls;

    @Option(names = "--metrics-job-names",
            description = "Label the per-job metrics with the job's name as well as its number (default: the number only;"
                    + " names are otherwise shown only to the operator).")
    boolean metricsJobNames;

    @Option(names = "--pool-slots", defaultValue = "" + SwitchConfig.DEFAULT_POOL_SLOTS,
            description = "Aggregator slots of all jobs together; a job holds threads x slots-per-thread of them while it"
                    + " runs (default: ${DEFAULT-VALUE}).")
    int poolSlots;

    @Option(names = "--pool-bytes", paramLabel = "BYTES",
            description = "Register memory of all jobs together (slots x (2 x packet payload + bitmaps) + one-round"
                    + " staging); a job that does not fit gets a smaller window or is refused (default: half the heap"
                    + " limit, -Xmx).")
    Long poolBytes;

    @Option(names = "--tenant-quota-bytes", paramLabel = "BYTES",
            description = "Register memory the running jobs of one tenant (its client certificate's subject, else the"
                    + " address of a job's first join, every loopback address one tenant) may hold together; beyond it a"
                    + " job gets a smaller window or is refused (default: no limit beyond --tenant-share).")
    Long tenantQuotaBytes;

    @Option(names = "--tenant-share", paramLabel = "SHARE", defaultValue = "" + ControllerSecurity.DEFAULT_TENANT_SHARE,
            description = "The share (0..1] of the pool's slots and bytes and of the job table that one tenant's jobs may"
                    + " hold; SwitchML's sessions are one tenant; the operator's jobs are not counted; 1 turns shares off"
                    + " (default: ${DEFAULT-VALUE}: no tenant can take the whole switch).")
    double tenantShare;

    @Option(names = "--job-quota", defaultValue = "0",
            description = "The most slots one job may hold; a job asking for more gets a smaller window (default: the"
                    + " whole pool).")
    int jobQuota;

    @Option(names = "--one-round-staging", defaultValue = "" + SwitchConfig.DEFAULT_ONE_ROUND_STAGING_BYTES,
            description = "Bytes of one-round staging one job may hold (workers x slots x values per packet x 4); a job"
                    + " needing more runs its float32 all-reduces in two rounds; 0 turns the one-round mode off"
                    + " (default: ${DEFAULT-VALUE}).")
    long oneRoundStaging;

    @Option(names = "--allow-fault-injection",
            description = "Let the drop simulator drop packets (--ingress-drop, --egress-drop, `switchml ctl drop`); for test"
                    + " switches only (default: refused with PERMISSION_DENIED).")
    boolean allowFaultInjection;

    @Option(names = "--ipc-dir", paramLabel = "DIR", description = "Where the switch makes the directory of its"
            + " shared-memory port, through which workers on this host reach it (default: /dev/shm, else the temporary"
            + " directory).")
    String ipcDir;

    @Option(names = "--no-ipc", description = "No shared-memory port: workers on this host use UDP too.")
    boolean noIpc;

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "Serve the controller over TLS with this certificate"
            + " chain (with --tls-key; `switchml certs` makes a test CA).")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "PKCS#8 private key of --tls-cert.")
    Path tlsKey;

    @Option(names = "--tls-client-ca", paramLabel = "PEM",
            description = "Mutual TLS: every client must present a certificate signed by this CA.")
    Path tlsClientCa;

    @Option(names = "--operator-token-file", paramLabel = "FILE",
            description = "File holding the operator token (first line) that inspection and administration (`switchml ctl`)"
                    + " must present (default: none, open to anyone who reaches the controller).")
    Path operatorTokenFile;

    @Option(names = "--issued-secrets-file", paramLabel = "FILE",
            description = "Keep the digests of the job secrets the operator issues (`switchml ctl secret`) in this file (0600),"
                    + " so that they outlive a restart (default: in memory only).")
    Path issuedSecretsFile;

    @Option(names = "--require-job-secrets",
            description = "Refuse joins that present no job secret (switchml.jobSecretFile); default: a job without one is"
                    + " open to anyone who reaches the controller.")
    boolean requireJobSecrets;

    @Option(names = "--switchml-sessions", defaultValue = "on", paramLabel = "off|on|CIDR,...",
            description = "Who may use SwitchML's own session protocol, which has no credentials: nobody, everybody, or"
                    + " peers in the listed subnets (default: ${DEFAULT-VALUE}).")
    String switchmlSessions;

    @Option(names = "--ipc-spin-micros", paramLabel = "MICROS",
            description = "How long the shared-memory port's reader polls after work before it sleeps until a worker"
                    + " rings, in microseconds; 0 never spins (default: 50 on a host with 4 cores or more, else 0).")
    Long ipcSpinMicros;

    @Option(names = "--udp-segmentation", defaultValue = "auto", paramLabel = Offload.CHOICES,
            description = "Send the results one read completed for one worker as one segmented datagram (UDP GSO) that the"
                    + " kernel cuts into them: auto where the epoll transport and kernel have it, on (required), off"
                    + " (default: ${DEFAULT-VALUE}).")
    String udpSegmentation;

    @Option(names = "--udp-gro", defaultValue = "auto", paramLabel = Offload.CHOICES,
            description = "Receive with UDP GRO: a run of one worker's packets arrives as one datagram, split into its"
                    + " packets, each checked as a single one: auto where the kernel grants it, on (required), off"
                    + " (default: ${DEFAULT-VALUE}).")
    String udpGro;

    @Option(names = "--trusted-networks", paramLabel = "on|CIDR,...",
            description = "Networks whose control-plane calls the switch takes besides its own host's: every network (on)"
                    + " or the listed subnets. Default: with credentials (--operator-token-file or --tls-client-ca) every"
                    + " network, without them this host only (protected mode).")
    String trustedNetworks;

    @Mixin
    LeafOptions leaf;

    @Override
    public Integer call() throws InterruptedException {
        SwitchConfig config = new SwitchConfig().bindAddress(bind).basePort(port).portCount(ports)
                .allowFaultInjection(allowFaultInjection)
                .ingressDropProbability(ingressDrop).egressDropProbability(egressDrop)
                .poolSlots(poolSlots).jobQuotaSlots(jobQuota).oneRoundStagingBytes(oneRoundStaging)
                .udpSegmentation(Offload.parse("--udp-segmentation", udpSegmentation))
                .udpGro(Offload.parse("--udp-gro", udpGro));
        if (noIpc) {
            config.ipcBase(null);
        } else if (ipcDir != null) {
            config.ipcBase(ipcDir);
        }
        if (ipcSpinMicros != null) {
            config.ipcSpinMicros(ipcSpinMicros);
        }
        if (poolBytes != null) {
            config.poolBytes(poolBytes);
        }
        ControllerSecurity security = new ControllerSecurity().requireJobSecrets(requireJobSecrets)
                .switchmlSessions(NetworkPolicy.parse("--switchml-sessions", switchmlSessions)).tenantShare(tenantShare)
                .issuedSecretsFile(issuedSecretsFile);
        if (trustedNetworks != null) {
            security.trustedNetworks(NetworkPolicy.parse("--trusted-networks", trustedNetworks));
        }
        if (tenantQuotaBytes != null) {
            security.tenantQuotaBytes(tenantQuotaBytes);
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new IllegalArgumentException("--tls-cert and --tls-key go together");
        }
        if (tlsCert != null) {
            security.tls(tlsCert, tlsKey);
        }
        if (tlsClientCa != null) {
            security.tlsClientCa(tlsClientCa);
        }
        if (operatorTokenFile != null) {
            security.operatorToken(SecretFiles.read(operatorTokenFile, "--operator-token-file"));
        }
        MetricsOptions metricsOptions = metricsOptions();
        AggregationService service = AggregationService.start(config, controllerBind, controllerPort, security, leaf.role());
        SwitchMetrics metrics;
        try {
            metrics = metricsOptions == null ? null : SwitchMetrics.start(service, metricsOptions);
        } catch (RuntimeException e) {
            service.close();
            throw e;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (metrics != null) {
                metrics.close();
            }
            service.close();
        }, "switchml-shutdown"));
        if (metrics != null) {
            System.out.println("switchml switch metrics: " + (metricsTls ? "https" : "http") + "://" + metricsBind + ":"
                    + metrics.port() + "/metrics");
        }
        String ready = "switchml switch ready: controller " + controllerBind + ":" + service.controllerPort()
                + " (gRPC), dataplane UDP " + bind + " ports " + Arrays.toString(service.dataplane().ports())
                + leaf.describe() + "; " + security.describeTrust();
        System.out.println(ready);
        System.out.flush();
        SystemdNotify.ready(ready, System.getenv(), System.err);
        service.awaitTermination();
        return 0;
    }

    /** The metrics endpoint's options; null when it is off (no --metrics-port). */
    private MetricsOptions metricsOptions() {
        if (metricsPort == null) {
            if (metricsTokenFile != null || metricsTls || metricsJobNames) {
                throw new IllegalArgumentException("--metrics-token-file, --metrics-tls and --metrics-job-names configure"
                        + " the metrics endpoint, which --metrics-port turns on");
            }
            return null;
        }
        MetricsOptions options = new MetricsOptions(metricsBind, metricsPort).jobNames(metricsJobNames);
        if (metricsTokenFile != null) {
            options.bearerToken(SecretFiles.read(metricsTokenFile, "--metrics-token-file"));
        }
        if (metricsTls) {
            if (tlsCert == null) {
                throw new IllegalArgumentException("--metrics-tls serves the metrics with the controller's certificate:"
                        + " set --tls-cert and --tls-key");
            }
            options.tls(tlsCert, tlsKey);
        }
        return options;
    }
}
