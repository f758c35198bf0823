package io.switchml.cli;

import io.switchml.controller.AggregationService;
import io.switchml.controller.SwitchMetrics;
import io.switchml.dataplane.SwitchConfig;
import io.switchml.protocol.ProtocolConstants;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

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

    @Option(names = "--ingress-drop", defaultValue = "0", description = "Probability of dropping a packet on arrival (drop simulator).")
    double ingressDrop;

    @Option(names = "--egress-drop", defaultValue = "0", description = "Probability of dropping each result sent (drop simulator).")
    double egressDrop;

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = "Serve Prometheus metrics on http://CONTROLLER-BIND:PORT/metrics (0 picks a free port, printed"
                    + " before the ready line; default: off).")
    Integer metricsPort;

    @Option(names = "--pool-slots", defaultValue = "" + SwitchConfig.DEFAULT_POOL_SLOTS,
            description = "Aggregator slots of all jobs together; a job holds threads x slots-per-thread of them while it"
                    + " runs (default: ${DEFAULT-VALUE}).")
    int poolSlots;

    @Option(names = "--job-quota", defaultValue = "0",
            description = "The most slots one job may hold; a job asking for more gets a smaller window (default: the"
                    + " whole pool).")
    int jobQuota;

    @Override
    public Integer call() throws InterruptedException {
        SwitchConfig config = new SwitchConfig().bindAddress(bind).basePort(port).portCount(ports)
                .ingressDropProbability(ingressDrop).egressDropProbability(egressDrop)
                .poolSlots(poolSlots).jobQuotaSlots(jobQuota);
        AggregationService service = AggregationService.start(config, controllerBind, controllerPort);
        SwitchMetrics metrics;
        try {
            metrics = metricsPort == null ? null : SwitchMetrics.start(service, controllerBind, metricsPort);
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
            System.out.println("switchml switch metrics: http://" + controllerBind + ":" + metrics.port() + "/metrics");
        }
        System.out.println("switchml switch ready: controller " + controllerBind + ":" + service.controllerPort()
                + " (gRPC), dataplane UDP " + bind + " ports " + Arrays.toString(service.dataplane().ports()));
        System.out.flush();
        service.awaitTermination();
        return 0;
    }
}
