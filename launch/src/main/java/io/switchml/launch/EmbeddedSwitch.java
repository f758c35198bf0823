package io.switchml.launch;

import io.switchml.control.ControllerAddress;
import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import io.switchml.controller.LeafRole;
import io.switchml.controller.NetworkPolicy;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.SwitchConfig;
import java.util.Arrays;
import java.util.Map;

/**
 * A switch with its controller started in this JVM, on ephemeral ports: the one place where
 * {@code bench}, {@code train} and Spark's driver start the switch their workers join, so that
 * none of them depends on the controller or the dataplane (docs/ARCHITECTURE.md section 1). It requires
 * job secrets, which those launchers give every job.
 */
public final class EmbeddedSwitch implements AutoCloseable {
    private final AggregationService service;
    private final String host;
    private final double dropProbability;

    private EmbeddedSwitch(AggregationService service, String host, double dropProbability) {
        this.service = service;
        this.host = host;
        this.dropProbability = dropProbability;
    }

    /** A switch and its controller on {@code address} (IPv4), with one receive thread per port. */
    public static EmbeddedSwitch start(String address, int switchPorts) {
        return start(address, switchPorts, 0);
    }

    /**
     * As {@link #start(String, int)}, dropping each packet and each result with {@code dropProbability}
     * (the drop simulator, which such a switch allows).
     */
    public static EmbeddedSwitch start(String address, int switchPorts, double dropProbability) {
        return new EmbeddedSwitch(AggregationService.start(config(address, switchPorts, dropProbability), address, 0,
                launchedJobsOnly()), address, dropProbability);
    }

    /** The spine of an embedded hierarchy: its jobs' ranks are the leaves, which present no job secret. */
    static EmbeddedSwitch spine(String address, int switchPorts, double dropProbability) {
        return new EmbeddedSwitch(AggregationService.start(config(address, switchPorts, dropProbability), address, 0,
                new ControllerSecurity().trustedNetworks(NetworkPolicy.ON)), address, dropProbability);
    }

    /**
     * Every job a launcher starts carries a secret ({@link JobSecret}), so a switch that only launched workers join
     * requires one: a stranger on the host can neither take a seat nor bind a job before its ranks. It takes calls
     * from wherever its address is reached (Spark's executors on other hosts), which its launcher chose.
     */
    private static ControllerSecurity launchedJobsOnly() {
        return new ControllerSecurity().requireJobSecrets(true).trustedNetworks(NetworkPolicy.ON);
    }

    /** Leaf {@code index} of {@code leaves} under the spine whose controller is {@code spine} (docs/ARCHITECTURE.md section 9). */
    static EmbeddedSwitch leaf(String address, int switchPorts, double dropProbability, EmbeddedSwitch spine, int index,
                               int leaves) {
        LeafRole role = new LeafRole(new ControllerAddress(spine.host, spine.service.controllerPort()), index, leaves, null);
        return new EmbeddedSwitch(AggregationService.start(config(address, switchPorts, dropProbability), address, 0,
                launchedJobsOnly(), role), address, dropProbability);
    }

    private static SwitchConfig config(String address, int switchPorts, double dropProbability) {
        return new SwitchConfig().bindAddress(address).basePort(0).portCount(switchPorts)
                .ingressDropProbability(dropProbability).egressDropProbability(dropProbability)
                .allowFaultInjection(dropProbability > 0);
    }

    /** Its controller as workers name it, {@code host:port} ({@code [v6]:port} for IPv6). */
    public String controller() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + service.controllerPort();
    }

    /** The dataplane's UDP ports. */
    public int[] dataplanePorts() {
        return service.dataplane().ports();
    }

    /** What a progress line says about it: controller, ports, shared-memory port, drops. */
    public String describe() {
        AggregationSwitch dataplane = service.dataplane();
        return "controller " + controller() + ", dataplane UDP ports " + Arrays.toString(dataplane.ports())
                + dataplane.ipcDirectory().map(d -> ", shared-memory port in " + d).orElse("")
                + (dropProbability > 0 ? ", dropping " + dropProbability + " of packets and of results" : "");
    }

    /** How many results it has delivered so far, by way; two readings tell how a run's workers reached it. */
    public ResultDelivery delivery() {
        Map<String, Long> counters = service.dataplane().counters();
        return new ResultDelivery(counters.getOrDefault("ipc_results", 0L), counters.getOrDefault("packets_sent", 0L));
    }

    @Override
    public void close() {
        service.close();
    }
}
