package io.switchml.bench;

import io.switchml.control.ControllerAddress;
import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import io.switchml.controller.LeafRole;
import io.switchml.dataplane.SwitchConfig;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The two-level hierarchy of {@code switchml bench --leaves L} on loopback (docs/ARCHITECTURE.md
 * section 9): a spine and L leaf switches embedded in the bench's JVM, each with its own ports;
 * rank r of a job of n workers joins the leaf that serves it.
 */
final class EmbeddedHierarchy implements AutoCloseable {
    private final AggregationService spine;
    private final List<AggregationService> leaves = new ArrayList<>();

    private EmbeddedHierarchy(AggregationService spine) {
        this.spine = spine;
    }

    /** Starts the spine, then the leaves; every switch drops with {@code dropProbability} each way. */
    static EmbeddedHierarchy start(int leafCount, int switchPorts, double dropProbability, PrintStream progress) {
        EmbeddedHierarchy hierarchy = new EmbeddedHierarchy(AggregationService.start(config(switchPorts, dropProbability),
                "127.0.0.1", 0));
        try {
            ControllerAddress spineController = new ControllerAddress("127.0.0.1", hierarchy.spine.controllerPort());
            for (int i = 0; i < leafCount; i++) {
                hierarchy.leaves.add(AggregationService.start(config(switchPorts, dropProbability), "127.0.0.1", 0,
                        new ControllerSecurity(), new LeafRole(spineController, i, leafCount, null)));
            }
        } catch (RuntimeException e) {
            hierarchy.close();
            throw e;
        }
        progress.println("embedded hierarchy: spine controller " + spineController(hierarchy) + ", " + leafCount
                + " leaves at " + hierarchy.leaves.stream().map(l -> "127.0.0.1:" + l.controllerPort()
                + " " + Arrays.toString(l.dataplane().ports())).toList()
                + (dropProbability > 0 ? ", every switch dropping " + dropProbability + " of packets and of results" : ""));
        return hierarchy;
    }

    private static String spineController(EmbeddedHierarchy hierarchy) {
        return "127.0.0.1:" + hierarchy.spine.controllerPort();
    }

    private static SwitchConfig config(int switchPorts, double dropProbability) {
        return new SwitchConfig().bindAddress("127.0.0.1").basePort(0).portCount(switchPorts)
                .ingressDropProbability(dropProbability).egressDropProbability(dropProbability)
                .allowFaultInjection(dropProbability > 0);
    }

    /** The controllers of the leaves, leaf 0 first. */
    List<String> leafControllers() {
        return leaves.stream().map(l -> "127.0.0.1:" + l.controllerPort()).toList();
    }

    @Override
    public void close() {
        leaves.forEach(AggregationService::close);
        spine.close();
    }
}
