package io.switchml.agent;

import io.switchml.api.AllReduce;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLConnection;
import io.switchml.collectives.CollectiveConfig;
import io.switchml.collectives.Collectives;
import io.switchml.collectives.Listener;

import java.net.InetSocketAddress;

/**
 * Joins the agent's job. The switch's job needs only the controller; the ring and the parameter
 * servers need every rank's endpoint, which the agent cannot know alone: it binds its listeners on
 * ephemeral ports first ({@link #endpoints()}, sent to the local process), and the local process
 * gathers every rank's through its own process group and hands the list back ({@link #open}).
 */
final class JobJoin implements AutoCloseable {
    private final AgentOptions options;
    private final Listener worker;
    private final Listener server;

    JobJoin(AgentOptions options) {
        this.options = options;
        if (options.algorithm().equals("switchml")) {
            worker = null;
            server = null;
            return;
        }
        String local = options.settings().getOrDefault(SwitchMLConfig.Key.LOCAL_ADDRESS.property(), "127.0.0.1");
        worker = Listener.bind(new InetSocketAddress(local, 0));
        try {
            server = options.algorithm().equals("ps") ? Listener.bind(new InetSocketAddress(local, 0)) : null;
        } catch (RuntimeException e) {
            worker.close();
            throw e;
        }
    }

    /** This rank's endpoints as {@code WORKER[/SERVER]}, or "-" when the job needs none. */
    String endpoints() {
        if (worker == null) {
            return "-";
        }
        return hostPort(worker.address()) + (server == null ? "" : "/" + hostPort(server.address()));
    }

    /**
     * Joins; returns once every rank has.
     *
     * @param peers every rank's {@link #endpoints()} in rank order, comma-separated ("-" for the switch)
     */
    AllReduce open(String peers) {
        if (worker == null) {
            // SWITCHML_* settings the launcher's environment holds (standbys, shards, localAddress...) apply too;
            // the process's own options win.
            return SwitchMLConnection.connect(SwitchMLConfig.builder().environment(System.getenv())
                    .settings(options.settings()).controller(options.controller()).job(options.job())
                    .rank(options.rank()).workers(options.workers()).build());
        }
        String[] ranks = peers.split(",");
        if (ranks.length != options.workers()) {
            throw new IllegalArgumentException("expected the endpoints of " + options.workers() + " ranks, got " + ranks.length + ": " + peers);
        }
        StringBuilder workers = new StringBuilder();
        StringBuilder servers = new StringBuilder();
        for (String rank : ranks) {
            String[] parts = rank.split("/");
            workers.append(workers.length() == 0 ? "" : ",").append(parts[0]);
            if (server != null) {
                if (parts.length != 2) {
                    throw new IllegalArgumentException("ps needs WORKER/SERVER endpoints for every rank, got '" + rank + "'");
                }
                servers.append(servers.length() == 0 ? "" : ",").append(parts[1]);
            }
        }
        CollectiveConfig.Builder config = CollectiveConfig.builder().algorithm(options.algorithm()).rank(options.rank())
                .workers(options.workers()).endpoints(workers.toString()).operationTimeout(options.operationTimeout());
        if (server != null) {
            config.servers(servers.toString()).serversInWorkers(true);
        }
        return Collectives.open(config.build(), worker, server);
    }

    private static String hostPort(InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    /** Releases listeners that {@link #open} did not take over. */
    @Override
    public void close() {
        // open() hands the listeners to the collective, which closes them; closing twice is harmless.
        if (worker != null) {
            worker.close();
        }
        if (server != null) {
            server.close();
        }
    }
}
