package io.switchml.agent;

import io.switchml.client.HostLayout;
import io.switchml.client.SwitchMLConfig;
import io.switchml.collectives.Compression;
import io.switchml.ipc.PrivateHome;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.WorkerConnection;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Opens a JVM rank's all-reduce (the training workers, Spark's barrier tasks, {@code switchml worker}): through its
 * host's agent where the settings' host layout ({@code switchml.hostLayout}) puts other ranks on its host, else the
 * algorithm's own, one worker per rank (docs/ARCHITECTURE.md section 16).
 *
 * <p>The host's first rank in the layout runs the agent in its own process ({@link InProcessAgent}); every rank of the
 * host, that one included, speaks to it through an {@link AgentClient}. They find it without talking to each other:
 * its socket and shared memory have names made from the controller, the job and the host's index, in this user's own
 * directory under /dev/shm ({@link PrivateHome}: 0700, never a link), so no other user can take or steer them.
 */
public final class HostAggregation {
    /** Bytes of each rank's region of the shared memory; a larger tensor goes in parts (tmpfs pages are taken as touched). */
    static final long REGION_BYTES = 64L << 20;
    /** How long the agent waits for the next request before it leaves the job, as {@code switchml agent}'s default. */
    static final Duration IDLE_TIMEOUT = Duration.ofMinutes(30);

    private HostAggregation() {
    }

    /** Opens {@code algorithm} for the rank configured by {@code settings}, through its host's agent where the layout says so. */
    public static WorkerConnection open(AllReduceAlgorithm algorithm, Map<String, String> settings, Compression compression,
                                        WorkerConnection.PeerExchange peers) {
        return open(algorithm, settings, compression, peers, REGION_BYTES);
    }

    /** The same with regions of {@code regionBytes} each. */
    static WorkerConnection open(AllReduceAlgorithm algorithm, Map<String, String> settings, Compression compression,
                                 WorkerConnection.PeerExchange peers, long regionBytes) {
        HostLayout layout = groupedLayout(algorithm, settings);
        if (layout == null) {
            return algorithm.open(settings, compression, peers);
        }
        SwitchMLConfig config = SwitchMLConfig.builder().settings(settings).build();
        int host = layout.hostOf(config.rank());
        Path[] place = place(config, settings.getOrDefault(SwitchMLConfig.Key.SHARDS.property(), ""), host);
        InProcessAgent agent = null;
        if (layout.ranksOf(host).get(0) == config.rank()) {
            agent = InProcessAgent.start(new AgentOptions(algorithm.id(), host, layout.hostCount(), config.controller(),
                    config.job(), place[0], place[1], regionBytes, settings, config.joinTimeout(),
                    config.operationTimeout(), IDLE_TIMEOUT, new AgentOptions.LocalRanks(layout.ranksOf(host), layout.rankCount())));
        }
        // The agent fails by itself, saying why, when its ranks do not all connect within the connect timeout.
        AgentClient client = AgentClient.connect(place[0], place[1], config.rank(), layout.rankCount(), config.joinTimeout(),
                config.operationTimeout(), agent);
        try {
            return connection(client, agent, layout);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * The rank's connection: the job's packet size and lanes, which host 0's first rank knows from its agent, go to every
     * rank (a verifier's block scaling needs them); a host's packets are counted at the rank that runs its agent.
     */
    private static WorkerConnection connection(AgentClient client, InProcessAgent agent, HostLayout layout) {
        int root = layout.ranksOf(0).get(0);
        ByteBuffer shape = ByteBuffer.allocate(2 * Integer.BYTES);
        if (client.rank() == root) {
            WorkerConnection job = agent.joined();
            shape.putInt(job.elementsPerPacket()).putInt(job.laneBits());
        }
        ByteBuffer known = ByteBuffer.wrap(client.broadcast(shape.array(), root));
        int elementsPerPacket = known.getInt();
        int laneBits = known.getInt();
        Supplier<WorkerConnection.Counters> counters = agent == null ? () -> new WorkerConnection.Counters(0, 0, 0)
                : () -> agent.joined().counters().get();
        return new WorkerConnection(client, counters, elementsPerPacket, laneBits);
    }

    /**
     * The settings' layout where it puts ranks together on a host and {@code algorithm} aggregates by host: it sums
     * exactly through a switch ({@code switchml}); the TCP baselines and the compressing ones keep one worker per rank.
     * Null where every rank is a worker of the job.
     */
    public static HostLayout groupedLayout(AllReduceAlgorithm algorithm, Map<String, String> settings) {
        if (!algorithm.needsSwitch() || algorithm.compressed()) {
            return null;
        }
        HostLayout layout = SwitchMLConfig.builder().settings(settings).build().hostLayout();
        return layout == null || !layout.groupsRanks() ? null : layout;
    }

    /** The agent's socket and shared memory for host {@code host} of the job, in this user's private directory. */
    static Path[] place(SwitchMLConfig config, String shards, int host) {
        Path base = Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm")
                : Path.of(System.getProperty("java.io.tmpdir"));
        PrivateHome home;
        try {
            home = PrivateHome.under(base);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make this user's directory under " + base + " for the host's agent: "
                    + e.getMessage(), e);
        }
        if (!home.trusted()) {
            throw new IllegalStateException("the host's agent finds its ranks by names in " + home.path() + ", which cannot"
                    + " be trusted: " + home.refused() + " (remove it, or leave " + SwitchMLConfig.Key.HOST_LAYOUT.property()
                    + " empty for one worker per rank)");
        }
        String name = "agent-" + digest(config.controller() + "|" + shards + "|" + config.job()
                + "|" + host);
        return new Path[]{home.path().resolve(name + ".sock"), home.path().resolve(name + ".shm")};
    }

    private static String digest(String text) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash, 0, 10);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
