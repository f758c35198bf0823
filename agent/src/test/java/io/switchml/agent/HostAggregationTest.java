package io.switchml.agent;

import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.api.SwitchMLException;
import io.switchml.client.SwitchMLConfig;
import io.switchml.collectives.Compression;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.WorkerConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** JVM ranks that share a host aggregate through one agent that the host's first rank runs (docs/ARCHITECTURE.md 16). */
class HostAggregationTest {
    private static final int COUNT = 300_000;
    /** Regions of 1 MiB: a tensor of COUNT floats goes in three parts. */
    private static final long REGION = 1 << 20;
    private AggregationService embedded;
    private String job;

    @BeforeEach
    void startSwitch() {
        job = "host-aggregation-" + System.nanoTime();
        embedded = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0);
    }

    @AfterEach
    void tearDown() {
        embedded.close();
    }

    @Test
    void threeRanksOfOneHostAndOneOfAnotherGetTheReferencesResultBitForBit() throws Exception {
        List<List<Integer>> hosts = List.of(List.of(0, 1, 2), List.of(3));
        Random random = new Random(38);
        float[][][] inputs = new float[hosts.size()][][];
        for (int h = 0; h < hosts.size(); h++) {
            inputs[h] = new float[hosts.get(h).size()][COUNT];
            for (float[] tensor : inputs[h]) {
                for (int e = 0; e < COUNT; e++) {
                    tensor[e] = (float) (random.nextGaussian() * Math.pow(2, random.nextInt(40) - 20));
                }
            }
        }
        List<Results> results = run("0,1,2/3", 4, (AllReduce a) -> {
            int host = a.rank() == 3 ? 1 : 0;
            float[] mine = inputs[host][host == 0 ? a.rank() : 0];
            Results r = new Results();
            r.sum = mine.clone();
            r.mean = mine.clone();
            CompletableFuture<Void> sum = a.allReduceAsync(r.sum, ReduceOp.SUM);
            CompletableFuture<Void> mean = a.allReduceAsync(r.mean, ReduceOp.MEAN);
            sum.join();
            mean.join();
            r.ints = new int[]{a.rank() + 1, -7, Integer.MAX_VALUE};
            a.allReduce(r.ints, ReduceOp.SUM);
            a.barrier();
            r.broadcast = new String(a.broadcast(a.rank() == 2 ? "from rank 2".getBytes(StandardCharsets.UTF_8) : new byte[0], 2),
                    StandardCharsets.UTF_8);
            return r;
        });
        float[] sum = ReferenceAllReduce.hostFloats(inputs, 256, ReduceOp.SUM);
        float[] mean = ReferenceAllReduce.hostFloats(inputs, 256, ReduceOp.MEAN);
        for (int rank = 0; rank < 4; rank++) {
            Results r = results.get(rank);
            assertThat(r.sum).as("rank %d's sum", rank).isEqualTo(sum);
            assertThat(r.mean).as("rank %d's mean", rank).isEqualTo(mean);
            assertThat(r.ints).isEqualTo(new int[]{10, -28, Integer.MAX_VALUE * 4});
            assertThat(r.broadcast).isEqualTo("from rank 2");
        }
        assertThat(embedded.dataplane().counters().get("results_sent")).as("two hosts go through the switch").isPositive();
    }

    @Test
    void oneHostsRanksSumLocallyWithoutTheSwitch() throws Exception {
        float[][] inputs = {{1.5f, -2f, 1e-30f}, {0.25f, 3f, 1e30f}};
        List<Results> results = run("0,1", 2, a -> {
            Results r = new Results();
            r.sum = inputs[a.rank()].clone();
            a.allReduce(r.sum, ReduceOp.SUM);
            return r;
        });
        float[] expected = {1.75f, 1f, 1e30f};
        assertThat(results.get(0).sum).isEqualTo(expected);
        assertThat(results.get(1).sum).isEqualTo(expected);
        assertThat(embedded.dataplane().counters().get("results_sent")).isZero();
    }

    @Test
    void aHostsFirstRankThatNeverComesIsNamedToTheOthers() {
        Map<String, String> settings = settings("0,1", 2, 1);
        settings.put(SwitchMLConfig.Key.JOIN_TIMEOUT_MS.property(), "1500");
        assertThatThrownBy(() -> HostAggregation.open(AllReduceAlgorithm.switchMl(), settings, Compression.DEFAULTS, null, REGION))
                .isInstanceOf(SwitchMLException.class)
                .hasMessageContaining("did not listen").hasMessageContaining("host's first rank runs it");
    }

    @Test
    void aHostsRankThatNeverComesIsNamedToTheFirst() {
        Map<String, String> settings = settings("0,1", 2, 0);
        settings.put(SwitchMLConfig.Key.JOIN_TIMEOUT_MS.property(), "1500");
        assertThatThrownBy(() -> HostAggregation.open(AllReduceAlgorithm.switchMl(), settings, Compression.DEFAULTS, null, REGION))
                .isInstanceOf(SwitchMLException.class)
                .hasMessageContaining("only 1 of this host's 2 processes [0, 1]");
    }

    @Test
    void theTcpBaselinesKeepOneWorkerPerRank() {
        assertThat(HostAggregation.groupedLayout(AllReduceAlgorithm.named("ring"), settings("0,1", 2, 0))).isNull();
        assertThat(HostAggregation.groupedLayout(AllReduceAlgorithm.switchMl(), settings("0,1", 2, 0))).hasToString("0,1");
        assertThat(HostAggregation.groupedLayout(AllReduceAlgorithm.switchMl(), settings("0/1", 2, 0))).isNull();
    }

    /** What one rank got. */
    private static final class Results {
        float[] sum;
        float[] mean;
        int[] ints;
        String broadcast;
    }

    /** Opens every rank of the layout on a thread of its own, runs {@code work} on each, and closes them all. */
    private List<Results> run(String layout, int ranks, Function<AllReduce, Results> work) throws Exception {
        List<CompletableFuture<Results>> runs = new ArrayList<>();
        for (int r = 0; r < ranks; r++) {
            Map<String, String> settings = settings(layout, ranks, r);
            runs.add(CompletableFuture.supplyAsync(() -> {
                try (WorkerConnection c = HostAggregation.open(AllReduceAlgorithm.switchMl(), settings, Compression.DEFAULTS,
                        null, REGION)) {
                    assertThat(c.allReduce()).isInstanceOf(AgentClient.class);
                    return work.apply(c.allReduce());
                }
            }, runnable -> new Thread(runnable, "rank-" + settings.get(SwitchMLConfig.Key.RANK.property())).start()));
        }
        List<Results> results = new ArrayList<>();
        for (CompletableFuture<Results> run : runs) {
            results.add(run.get(60, TimeUnit.SECONDS));
        }
        return results;
    }

    private Map<String, String> settings(String layout, int ranks, int rank) {
        Map<String, String> s = new HashMap<>();
        s.put(SwitchMLConfig.Key.CONTROLLER.property(), "127.0.0.1:" + embedded.controllerPort());
        s.put(SwitchMLConfig.Key.JOB.property(), job);
        s.put(SwitchMLConfig.Key.RANK.property(), String.valueOf(rank));
        s.put(SwitchMLConfig.Key.WORKERS.property(), String.valueOf(ranks));
        s.put(SwitchMLConfig.Key.HOST_LAYOUT.property(), layout);
        s.put(SwitchMLConfig.Key.ELEMENTS_PER_PACKET.property(), "256");
        s.put(SwitchMLConfig.Key.JOIN_TIMEOUT_MS.property(), "30000");
        s.put(SwitchMLConfig.Key.OPERATION_TIMEOUT_MS.property(), "30000");
        return s;
    }
}
