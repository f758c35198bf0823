package io.switchml.agent;

import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class AgentTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    @TempDir
    Path dir;
    private AggregationService embedded;
    private final List<Client> clients = new ArrayList<>();

    @AfterEach
    void tearDown() throws IOException {
        for (Client c : clients) {
            c.channel.close();
        }
        // An agent whose process went away ends without leaving its job (its own process halts); here, close it.
        for (int r = 0; r < agents.size(); r++) {
            try {
                started.get(r).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (Exception ignored) {
                // A test already looked at how it ended.
            }
            if (agents.get(r).abandonedJob() != null) {
                agents.get(r).abandonedJob().close();
            }
        }
        if (embedded != null) {
            embedded.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"switchml", "ring", "ps"})
    void reducesTensorsInTheSharedMemoryInPlaceAndCompletesThemInOrder(String algorithm) throws Exception {
        int n = 2;
        List<CompletableFuture<Integer>> runs = start(algorithm, n);
        joinAll();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("shm-0"))))
                .as("the shared memory is its user's alone").isEqualTo("rw-------");
        int[] sizes = {3000, 1, 70000};
        long[] offsets = {0, 16384, 32768};
        for (Client c : clients) {
            for (int i = 0; i < sizes.length; i++) {
                FloatBuffer f = c.floats(offsets[i], sizes[i]);
                for (int e = 0; e < sizes[i]; e++) {
                    f.put(e, (c.rank + 1) * (e % 100));
                }
                c.send("R " + (10 + i) + " " + offsets[i] + " " + sizes[i] + " sum f32");
            }
        }
        for (Client c : clients) {
            for (int i = 0; i < sizes.length; i++) {
                assertThat(c.line()).isEqualTo("D " + (10 + i));
                FloatBuffer f = c.floats(offsets[i], sizes[i]);
                for (int e = 0; e < sizes[i]; e++) {
                    assertThat(f.get(e)).as("element %d of tensor %d", e, i).isEqualTo(3f * (e % 100));
                }
            }
            c.send("BYE");
        }
        for (int r = 0; r < n; r++) {
            assertThat(clients.get(r).line()).isEqualTo("BYE");
            assertThat(runs.get(r).get(WAIT.toSeconds(), TimeUnit.SECONDS)).isZero();
        }
        assertThat(Files.exists(dir.resolve("shm-0"))).as("the agent removes its shared memory").isFalse();
    }

    @Test
    void whenItsProcessDiesTheAgentEndsWithoutLeavingTheJob() throws Exception {
        List<CompletableFuture<Integer>> runs = start("switchml", 2);
        joinAll();
        clients.get(1).channel.close();
        assertThat(runs.get(1).get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Agent.PROCESS_DIED);
        assertThat(logs.get(1).toString()).contains("closed the connection without BYE", "without leaving the job");
        assertThat(Files.exists(dir.resolve("shm-1"))).as("the agent removes its shared memory").isFalse();
        // In its own process the agent now halts; here the job is still joined until tearDown closes it.
        assertThat(agents.get(1).abandonedJob()).isNotNull();
    }

    @Test
    void leavesTheJobWhenItsProcessSaysByeAndTheOtherRankHearsWhy() throws Exception {
        List<CompletableFuture<Integer>> runs = start("ring", 2);
        joinAll();
        clients.get(1).send("BYE");
        assertThat(clients.get(1).line()).isEqualTo("BYE");
        assertThat(runs.get(1).get(WAIT.toSeconds(), TimeUnit.SECONDS)).isZero();
        Client survivor = clients.get(0);
        survivor.send("R 0 0 1000 mean f32");
        assertThat(survivor.line()).startsWith("E 0 all-reduce 0 failed");
        assertThat(runs.get(0).get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
    }

    @Test
    void aMalformedRequestEndsTheAgentWithTheReason() throws Exception {
        List<CompletableFuture<Integer>> runs = start("ring", 1);
        joinAll();
        clients.get(0).send("R 1 4096 10 max f32");
        assertThat(clients.get(0).line()).startsWith("FAIL unknown reduction 'max'");
        assertThat(runs.get(0).get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
    }

    @Test
    void givesUpWhenNoProcessConnects() throws Exception {
        AgentOptions o = options("ring", 0, 1, Duration.ofMillis(200));
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        assertThat(new Agent(o, new PrintStream(log, true, StandardCharsets.UTF_8)).run()).isEqualTo(1);
        assertThat(log.toString(StandardCharsets.UTF_8)).contains("no process connected to").contains("within PT0.2S");
    }

    private final List<ByteArrayOutputStream> logs = new ArrayList<>();
    private final List<Agent> agents = new ArrayList<>();
    private final List<CompletableFuture<Integer>> started = new ArrayList<>();

    private List<CompletableFuture<Integer>> start(String algorithm, int n) throws Exception {
        if (algorithm.equals("switchml")) {
            embedded = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0);
        }
        List<CompletableFuture<Integer>> runs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            AgentOptions o = options(algorithm, r, n, WAIT);
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            logs.add(log);
            Agent agent = new Agent(o, new PrintStream(log, true, StandardCharsets.UTF_8));
            agents.add(agent);
            runs.add(CompletableFuture.supplyAsync(agent::run));
            started.add(runs.get(runs.size() - 1));
            clients.add(Client.connect(r, o));
        }
        return runs;
    }

    private AgentOptions options(String algorithm, int rank, int n, Duration connectTimeout) {
        String controller = embedded == null ? null : "127.0.0.1:" + embedded.controllerPort();
        return new AgentOptions(algorithm, rank, n, controller, "agent-test", dir.resolve("agent-" + rank + ".sock"),
                dir.resolve("shm-" + rank), 1 << 20, Map.of("switchml.elementsPerPacket", "256"), connectTimeout, WAIT, WAIT);
    }

    /** What the Python side does: every rank's HELLO endpoints, gathered, go back to every agent in JOIN. */
    private void joinAll() throws IOException {
        List<String> endpoints = new ArrayList<>();
        for (Client c : clients) {
            String[] hello = c.line().split(" ");
            assertThat(hello[0]).isEqualTo("HELLO");
            endpoints.add(hello[4]);
        }
        for (Client c : clients) {
            c.send("JOIN " + String.join(",", endpoints));
        }
        for (Client c : clients) {
            assertThat(c.line()).isEqualTo("READY " + c.rank + " " + clients.size());
            c.map();
        }
    }

    private static final class Client {
        final int rank;
        final AgentOptions options;
        final SocketChannel channel;
        final BufferedReader in;
        MappedByteBuffer shared;

        private Client(int rank, AgentOptions options, SocketChannel channel) {
            this.rank = rank;
            this.options = options;
            this.channel = channel;
            this.in = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel), StandardCharsets.UTF_8));
        }

        /** Connects once the agent listens (its socket file appears at bind, just before it listens). */
        static Client connect(int rank, AgentOptions o) throws Exception {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
                try {
                    channel.connect(UnixDomainSocketAddress.of(o.socket()));
                    return new Client(rank, o, channel);
                } catch (IOException e) {
                    channel.close();
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("agent " + rank + " did not listen on " + o.socket() + " within " + WAIT, e);
                    }
                    Thread.sleep(20);
                }
            }
        }

        void map() throws IOException {
            try (RandomAccessFile f = new RandomAccessFile(options.sharedMemory().toFile(), "rw")) {
                shared = f.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, f.length());
            }
        }

        FloatBuffer floats(long offset, int count) {
            return shared.slice((int) offset, count * 4).order(ByteOrder.nativeOrder()).asFloatBuffer();
        }

        void send(String line) throws IOException {
            ByteBuffer b = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
            while (b.hasRemaining()) {
                channel.write(b);
            }
        }

        /** Reads are bounded by the agent: it answers, fails with a reason, or closes the socket. */
        String line() throws IOException {
            String line = in.readLine();
            assertThat(line).as("a line from agent %d", rank).isNotNull();
            return line;
        }
    }
}
