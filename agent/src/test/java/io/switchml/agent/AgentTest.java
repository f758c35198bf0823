package io.switchml.agent;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
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
import java.nio.IntBuffer;
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
import java.util.Random;
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
        AgentOptions o = options("ring", 0, 1, Duration.ofMillis(200), AgentOptions.LocalRanks.alone(0, 1));
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        assertThat(new Agent(o, new PrintStream(log, true, StandardCharsets.UTF_8)).run()).isEqualTo(1);
        assertThat(log.toString(StandardCharsets.UTF_8)).contains("no process connected to").contains("within PT0.2S");
    }

    @Test
    void aHostsRanksShareOneAgentThatSumsThemOnceAndWritesTheResultIntoEachRanksTensor() throws Exception {
        // Two hosts of a launch of 3 ranks: ranks 0 and 1 share the first agent, rank 2 has the second.
        List<CompletableFuture<Integer>> runs = start("switchml", List.of(List.of(0, 1), List.of(2)));
        joinAll();
        assertThat(Files.size(dir.resolve("shm-0"))).as("one region per local rank, page-aligned").isEqualTo(2 * (1 << 20));
        int count = 5000;
        for (Client c : clients) {
            // Each rank's own offsets within its region: they need not agree.
            long floats = c.rank * 4096L;
            long ints = 65536 + c.rank * 64L;
            FloatBuffer f = c.floats(floats, count);
            IntBuffer i = c.ints(ints, count);
            for (int e = 0; e < count; e++) {
                f.put(e, (c.rank + 1) * (e % 100));
                i.put(e, (c.rank + 1) * (e - 2500) * 1000);
            }
            c.send("R 7 " + floats + " " + count + " mean f32");
            c.send("R 8 " + ints + " " + count + " mean i32");
        }
        for (Client c : clients) {
            assertThat(c.line()).isEqualTo("D 7");
            assertThat(c.line()).isEqualTo("D 8");
            FloatBuffer f = c.floats(c.rank * 4096L, count);
            IntBuffer i = c.ints(65536 + c.rank * 64L, count);
            for (int e = 0; e < count; e++) {
                // The mean over the launch's 3 ranks, not over the job's 2 workers.
                assertThat(f.get(e)).as("rank %d, float element %d", c.rank, e).isEqualTo(2f * (e % 100));
                assertThat(i.get(e)).as("rank %d, int element %d", c.rank, e).isEqualTo(6 * (e - 2500) * 1000 / 3);
            }
            c.send("BYE");
        }
        for (Client c : clients) {
            assertThat(c.line()).isEqualTo("BYE");
        }
        for (CompletableFuture<Integer> run : runs) {
            assertThat(run.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isZero();
        }
        assertThat(logs.get(0).toString()).contains("job rank 0 of 2, for ranks [0, 1] of the launch's 3");
    }

    /** Three ranks on one host, one on another; and three on one host alone, whose job has nothing to add to its sum. */
    static List<List<List<Integer>>> layouts() {
        return List.of(List.of(List.of(0, 1, 2), List.of(3)), List.of(List.of(0, 1, 2)));
    }

    @ParameterizedTest
    @MethodSource("layouts")
    void aHostsResultIsTheReferencesBitForBitOnEveryRank(List<List<Integer>> hosts) throws Exception {
        // Values of every magnitude, so the local float sums round.
        List<CompletableFuture<Integer>> runs = start("switchml", hosts);
        joinAll();
        int count = 10_000;
        Random random = new Random(38);
        float[][][] inputs = new float[hosts.size()][][];
        for (int h = 0; h < hosts.size(); h++) {
            inputs[h] = new float[hosts.get(h).size()][count];
            for (float[] tensor : inputs[h]) {
                for (int e = 0; e < count; e++) {
                    tensor[e] = (float) (random.nextGaussian() * Math.pow(2, random.nextInt(40) - 20));
                }
            }
        }
        ReduceOp[] ops = {ReduceOp.SUM, ReduceOp.MEAN};
        for (int h = 0; h < hosts.size(); h++) {
            for (int l = 0; l < hosts.get(h).size(); l++) {
                Client c = clients.get(hosts.get(h).get(l));
                for (int o = 0; o < ops.length; o++) {
                    c.floats(o * 65536L, count).put(inputs[h][l]);
                    c.send("R " + o + " " + o * 65536L + " " + count + " " + ops[o].name().toLowerCase() + " f32");
                }
            }
        }
        for (int o = 0; o < ops.length; o++) {
            float[] expected = ReferenceAllReduce.hostFloats(inputs, 256, ops[o]);
            for (Client c : clients) {
                assertThat(c.line()).isEqualTo("D " + o);
                float[] result = new float[count];
                c.floats(o * 65536L, count).get(result);
                for (int e = 0; e < count; e++) {
                    assertThat(Float.floatToRawIntBits(result[e])).as("%s, rank %d, element %d: %s against %s", ops[o], c.rank, e,
                            result[e], expected[e]).isEqualTo(Float.floatToRawIntBits(expected[e]));
                }
            }
        }
        if (hosts.size() == 1) {
            // One host: the result is its ranks' float32 sum in rank order, and no slot of the switch ever completed.
            float[] sum = inputs[0][0].clone();
            for (int l = 1; l < inputs[0].length; l++) {
                for (int e = 0; e < count; e++) {
                    sum[e] += inputs[0][l][e];
                }
            }
            assertThat(ReferenceAllReduce.hostFloats(inputs, 256, ReduceOp.SUM)).isEqualTo(sum);
            assertThat(embedded.dataplane().counters().get("results_sent")).isZero();
        }
        for (Client c : clients) {
            c.send("BYE");
            assertThat(c.line()).isEqualTo("BYE");
        }
        for (CompletableFuture<Integer> run : runs) {
            assertThat(run.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isZero();
        }
    }

    @Test
    void localRanksAskingForDifferentTensorsFailWithBothNamed() throws Exception {
        List<CompletableFuture<Integer>> runs = start("ring", List.of(List.of(0, 1)));
        joinAll();
        clients.get(0).send("R 0 0 1000 sum f32");
        clients.get(1).send("R 0 0 999 sum f32");
        for (Client c : clients) {
            assertThat(c.line()).startsWith("FAIL the local ranks' all-reduce 0 differs: rank 0 asked for 1000 f32 elements (sum),"
                    + " rank 1 for 999 f32 elements (sum)");
        }
        assertThat(runs.get(0).get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
    }

    @Test
    void aLocalRankThatSaysByeWhileAnotherWaitsForItFailsBoth() throws Exception {
        List<CompletableFuture<Integer>> runs = start("ring", List.of(List.of(0, 1)));
        joinAll();
        clients.get(0).send("R 5 0 1000 sum f32");
        clients.get(1).send("BYE");
        // Two sockets, two reader threads: the agent may see either first, and says so either way; rank 1, whose BYE
        // it may take before rank 0's request, may first hear its BYE answered.
        String byeFirst = "FAIL rank 0 asked for an all-reduce (request 5) after rank 1, which shares this host's agent,"
                + " said BYE: the local ranks' steps differ";
        String requestFirst = "FAIL rank 1 said BYE while rank 0's all-reduce (request 5) waits for it: the local ranks'"
                + " steps differ";
        assertThat(clients.get(0).line()).isIn(byeFirst, requestFirst);
        assertThat(clients.get(1).line()).isIn(byeFirst, requestFirst, "BYE");
        assertThat(runs.get(0).get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
    }

    @Test
    void whenOneOfAHostsRanksDiesTheOthersAreToldWhichAndTheAgentEndsWithoutLeaving() throws Exception {
        List<CompletableFuture<Integer>> runs = start("switchml", List.of(List.of(0, 1), List.of(2)));
        joinAll();
        clients.get(0).send("R 0 0 1000 sum f32");
        clients.get(1).channel.close();
        assertThat(clients.get(0).line()).startsWith("FAIL this host's agent stopped because rank 1 died: its process died"
                + " or was killed");
        assertThat(runs.get(0).get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Agent.PROCESS_DIED);
        assertThat(agents.get(0).abandonedJob()).as("the job left joined, for the controller to see it end").isNotNull();
    }

    @Test
    void aHostsAgentWaitsForEveryLocalRankAndNamesThoseMissing() throws Exception {
        AgentOptions o = options("ring", 0, 1, Duration.ofMillis(300), new AgentOptions.LocalRanks(List.of(0, 1), 2));
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        CompletableFuture<Integer> run = CompletableFuture.supplyAsync(new Agent(o, new PrintStream(log, true, StandardCharsets.UTF_8))::run);
        clients.add(Client.connect(0, o));
        assertThat(run.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(log.toString(StandardCharsets.UTF_8)).contains("only 1 of this host's 2 processes [0, 1] connected to");
    }

    private final List<ByteArrayOutputStream> logs = new ArrayList<>();
    private final List<Agent> agents = new ArrayList<>();
    private final List<CompletableFuture<Integer>> started = new ArrayList<>();

    /** {@code n} agents of one rank each. */
    private List<CompletableFuture<Integer>> start(String algorithm, int n) throws Exception {
        List<List<Integer>> hosts = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            hosts.add(List.of(r));
        }
        return start(algorithm, hosts);
    }

    /** One agent per host, serving that host's ranks of the launch (every rank's client connected, in rank order). */
    private List<CompletableFuture<Integer>> start(String algorithm, List<List<Integer>> hosts) throws Exception {
        if (algorithm.equals("switchml")) {
            embedded = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0);
        }
        int ranks = hosts.stream().mapToInt(List::size).sum();
        List<CompletableFuture<Integer>> runs = new ArrayList<>();
        Client[] byRank = new Client[ranks];
        for (int h = 0; h < hosts.size(); h++) {
            AgentOptions o = options(algorithm, h, hosts.size(), WAIT, new AgentOptions.LocalRanks(hosts.get(h), ranks));
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            logs.add(log);
            Agent agent = new Agent(o, new PrintStream(log, true, StandardCharsets.UTF_8));
            agents.add(agent);
            runs.add(CompletableFuture.supplyAsync(agent::run));
            started.add(runs.get(runs.size() - 1));
            for (int rank : hosts.get(h)) {
                byRank[rank] = Client.connect(rank, o);
            }
        }
        clients.addAll(List.of(byRank));
        return runs;
    }

    private AgentOptions options(String algorithm, int rank, int n, Duration connectTimeout, AgentOptions.LocalRanks local) {
        String controller = embedded == null ? null : "127.0.0.1:" + embedded.controllerPort();
        return new AgentOptions(algorithm, rank, n, controller, "agent-test", dir.resolve("agent-" + rank + ".sock"),
                dir.resolve("shm-" + rank), 1 << 20, Map.of("switchml.elementsPerPacket", "256"), connectTimeout, WAIT, WAIT, local);
    }

    /** What the Python side does: each host's HELLO endpoints (its first rank's), gathered, go back to every rank in JOIN. */
    private void joinAll() throws IOException {
        List<String> endpoints = new ArrayList<>();
        for (Client c : clients) {
            String[] hello = c.line().split(" ");
            assertThat(hello[0]).isEqualTo("HELLO");
            assertThat(hello[2]).isEqualTo(Integer.toString(c.rank));
            if (c.options.local().ranks().get(0) == c.rank) {
                endpoints.add(hello[4]);
            }
        }
        for (Client c : clients) {
            c.send("JOIN " + String.join(",", endpoints));
        }
        for (Client c : clients) {
            String[] ready = c.line().split(" ");
            assertThat(ready).hasSize(5);
            assertThat(ready[0] + " " + ready[1] + " " + ready[2]).isEqualTo("READY " + c.rank + " " + clients.size());
            c.map(Long.parseLong(ready[3]), Long.parseLong(ready[4]));
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
                    Client client = new Client(rank, o, channel);
                    client.send("RANK " + rank);
                    return client;
                } catch (IOException e) {
                    channel.close();
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("agent " + rank + " did not listen on " + o.socket() + " within " + WAIT, e);
                    }
                    Thread.sleep(20);
                }
            }
        }

        /** Maps this rank's region only, as the Python side does. */
        void map(long offset, long bytes) throws IOException {
            try (RandomAccessFile f = new RandomAccessFile(options.sharedMemory().toFile(), "rw")) {
                shared = f.getChannel().map(FileChannel.MapMode.READ_WRITE, offset, bytes);
            }
        }

        IntBuffer ints(long offset, int count) {
            return shared.slice((int) offset, count * 4).order(ByteOrder.nativeOrder()).asIntBuffer();
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
