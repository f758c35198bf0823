package io.switchml.launch;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The two-level hierarchy of {@code switchml bench --leaves L} on loopback (docs/ARCHITECTURE.md
 * section 9): a spine and L leaf switches embedded in this JVM, each with its own ports; rank r of a
 * job of n workers joins the leaf that serves it.
 */
public final class EmbeddedHierarchy implements AutoCloseable {
    private static final String LOOPBACK = "127.0.0.1";

    private final EmbeddedSwitch spine;
    private final List<EmbeddedSwitch> leaves = new ArrayList<>();

    private EmbeddedHierarchy(EmbeddedSwitch spine) {
        this.spine = spine;
    }

    /** Starts the spine, then the leaves; every switch drops with {@code dropProbability} each way. */
    public static EmbeddedHierarchy start(int leafCount, int switchPorts, double dropProbability, PrintStream progress) {
        EmbeddedHierarchy hierarchy = new EmbeddedHierarchy(EmbeddedSwitch.spine(LOOPBACK, switchPorts, dropProbability));
        try {
            for (int i = 0; i < leafCount; i++) {
                hierarchy.leaves.add(EmbeddedSwitch.leaf(LOOPBACK, switchPorts, dropProbability, hierarchy.spine, i,
                        leafCount));
            }
        } catch (RuntimeException e) {
            hierarchy.close();
            throw e;
        }
        progress.println("embedded hierarchy: spine controller " + hierarchy.spine.controller() + ", " + leafCount
                + " leaves at " + hierarchy.leaves.stream().map(l -> l.controller() + " "
                + Arrays.toString(l.dataplanePorts())).toList()
                + (dropProbability > 0 ? ", every switch dropping " + dropProbability + " of packets and of results" : ""));
        return hierarchy;
    }

    /** The controllers of the leaves, leaf 0 first. */
    public List<String> leafControllers() {
        return leaves.stream().map(EmbeddedSwitch::controller).toList();
    }

    @Override
    public void close() {
        leaves.forEach(EmbeddedSwitch::close);
        spine.close();
    }
}
