package io.switchml.agent;

import io.switchml.client.SwitchMLConfig;
import io.switchml.collectives.Compression;
import io.switchml.collectives.Endpoints;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.PeerEndpoints;
import io.switchml.launch.WorkerConnection;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Joins the agent's job through its registered {@link AllReduceAlgorithm}. The switch's job needs only the
 * controller; the TCP baselines need every rank's endpoint, which the agent cannot know alone: the algorithm
 * binds its listeners on ephemeral ports first, the agent sends them to the local process on its HELLO line,
 * and the local process gathers every rank's through its own process group and hands the list back on its
 * JOIN line. An algorithm that exchanges nothing sends "-" and gets "-" back.
 */
final class JobJoin {
    /** Sends the HELLO line with this rank's endpoints and returns the peers of the JOIN line that answers it. */
    @FunctionalInterface
    interface Greeting {
        String exchange(String endpoints) throws IOException;
    }

    private JobJoin() {
    }

    /** Joins; returns once every rank has. */
    static WorkerConnection open(AgentOptions options, Greeting greeting) {
        AllReduceAlgorithm algorithm = AllReduceAlgorithm.named(options.algorithm());
        Map<String, String> settings = settings(options, algorithm);
        if (!algorithm.exchangesEndpoints()) {
            greet(greeting, "-");
            return algorithm.open(settings, Compression.DEFAULTS, mine -> {
                throw new IllegalStateException(algorithm.id() + " asked for its peers' endpoints but says it needs none");
            });
        }
        return algorithm.open(settings, Compression.DEFAULTS, mine ->
                peers(greet(greeting, endpoints(mine)), options.workers(), mine.server() != null));
    }

    /**
     * The worker settings: {@code SWITCHML_*} settings the launcher's environment holds (standbys, shards,
     * localAddress...), then the process's own options, which win; the operation timeout unless the settings name one.
     */
    static Map<String, String> settings(AgentOptions options, AllReduceAlgorithm algorithm) {
        SwitchMLConfig.Builder config = SwitchMLConfig.builder().environment(System.getenv()).settings(options.settings())
                .rank(options.rank()).workers(options.workers())
                // The agent is its host's one worker: a layout of the launch's ranks (from the environment) is not its job's.
                .set(SwitchMLConfig.Key.HOST_LAYOUT, "");
        if (!SwitchMLConfig.Key.properties(options.settings()).containsKey(SwitchMLConfig.Key.OPERATION_TIMEOUT_MS.property())) {
            config.operationTimeout(options.operationTimeout());
        }
        if (algorithm.needsSwitch()) {
            config.controller(options.controller()).job(options.job());
        }
        return config.build().toMap();
    }

    private static String greet(Greeting greeting, String endpoints) {
        try {
            return greeting.exchange(endpoints);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot exchange endpoints with the local process: " + e.getMessage(), e);
        }
    }

    /** This rank's endpoints as {@code WORKER[/SERVER]}. */
    static String endpoints(PeerEndpoints.Endpoint mine) {
        return Endpoints.format(List.of(mine.worker())) + (mine.server() == null ? "" : "/" + Endpoints.format(List.of(mine.server())));
    }

    /** Every rank's endpoints from the JOIN line: {@code WORKER[/SERVER]} in rank order, comma-separated. */
    static PeerEndpoints peers(String line, int workers, boolean withServers) {
        String[] ranks = line.split(",");
        if (ranks.length != workers) {
            throw new IllegalArgumentException("expected the endpoints of " + workers + " ranks, got " + ranks.length + ": " + line);
        }
        List<InetSocketAddress> workerEndpoints = new ArrayList<>();
        List<InetSocketAddress> servers = new ArrayList<>();
        for (String rank : ranks) {
            String[] parts = rank.trim().split("/");
            workerEndpoints.add(Endpoints.parseOne(parts[0]));
            if (withServers) {
                if (parts.length != 2) {
                    throw new IllegalArgumentException("this algorithm needs WORKER/SERVER endpoints for every rank, got '"
                            + rank + "'");
                }
                servers.add(Endpoints.parseOne(parts[1]));
            }
        }
        return new PeerEndpoints(workerEndpoints, servers);
    }
}
