package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * One job over a switch sharded over several embedded switches (docs/ARCHITECTURE.md section 10): results
 * bit-identical to one switch's, every shard carrying its part, and a shard that fails over to its standby alone.
 */
class ShardedSwitchTest {
    private static final int K = TestDefaults.ELEMENTS_PER_PACKET;

    private final List<AggregationService> switches = new ArrayList<>();
    private final List<ShardedSwitchML> workers = new ArrayList<>();

    @AfterEach
    void close() {
        workers.forEach(ShardedSwitchML::close);
        switches.forEach(AggregationService::close);
    }

    private String startSwitch() {
        AggregationService service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0)
                .allowFaultInjection(true), "127.0.0.1", 0);
        switches.add(service);
        return "127.0.0.1:" + service.controllerPort();
    }

    private void join(int n, String shards, UnaryOperator<SwitchMLConfig.Builder> configure) {
        String job = "sharded-" + System.nanoTime();
        List<CompletableFuture<ShardedSwitchML>> joining = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            SwitchMLConfig config = configure.apply(SwitchMLConfig.builder().shards(shards).job(job).rank(r).workers(n)
                    .joinTimeout(Duration.ofSeconds(30)).operationTimeout(Duration.ofSeconds(60))
                    .elementsPerPacket(K).slotsPerThread(TestDefaults.SLOTS_PER_THREAD)).build();
            joining.add(CompletableFuture.supplyAsync(() -> ShardedSwitchML.connect(config)));
        }
        for (CompletableFuture<ShardedSwitchML> f : joining) {
            workers.add(f.join());
        }
    }

    private static long contributions(AggregationService service) {
        return service.dataplane().counters().getOrDefault("contributions", 0L);
    }

    @Test
    void everyLengthIsExactThroughThreeShardsAndEveryShardCarriesItsPart() throws Exception {
        String shards = String.join(";", startSwitch(), startSwitch(), startSwitch());
        int n = 3;
        join(n, shards, b -> b.threads(4)); // shard 0 gets threads 0 and 3, shards 1 and 2 one each
        assertThat(workers.get(0).shardCount()).isEqualTo(3);
        for (int length : new int[] {1, 100, K, 2 * K + 17, 5 * K, 3 * 64 * K + 5}) {
            float[][] in = TestTensors.floatsByRank(length, n, length);
            float[] expected = ReferenceAllReduce.floats(in, K, ReduceOp.SUM);
            int[][] ints = TestTensors.intsByRank(length + 1, n, length);
            int[] expectedInts = ReferenceAllReduce.ints(ints, ReduceOp.SUM);
            float[][] out = new float[n][length];
            int[][] intOut = new int[n][length];
            List<CompletableFuture<Void>> ops = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                ops.add(workers.get(r).allReduceAsync(FloatBuffer.wrap(in[r]), FloatBuffer.wrap(out[r]), ReduceOp.SUM));
                ops.add(workers.get(r).allReduceAsync(IntBuffer.wrap(ints[r]), IntBuffer.wrap(intOut[r]), ReduceOp.SUM));
            }
            for (CompletableFuture<Void> op : ops) {
                op.get(60, TimeUnit.SECONDS);
            }
            for (int r = 0; r < n; r++) {
                assertThat(out[r]).as("float32 of %d on rank %d", length, r).isEqualTo(expected);
                assertThat(intOut[r]).as("int32 of %d on rank %d", length, r).isEqualTo(expectedInts);
            }
        }
        for (int s = 0; s < switches.size(); s++) {
            assertThat(contributions(switches.get(s))).as("contributions at shard %d", s).isPositive();
        }
        // Shard 0 carries half the blocks (two of four threads), the others a quarter each.
        assertThat(contributions(switches.get(0))).isGreaterThan(contributions(switches.get(1)));
    }

    @Test
    void fewerThreadsThanShardsGetOneThreadPerShard() throws Exception {
        join(2, String.join(";", startSwitch(), startSwitch()), b -> b.threads(1));
        float[][] in = TestTensors.floatsByRank(5, 2, 4 * K);
        float[] expected = ReferenceAllReduce.floats(in, K, ReduceOp.SUM);
        List<CompletableFuture<Void>> ops = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            ops.add(workers.get(r).allReduceAsync(FloatBuffer.wrap(in[r]), FloatBuffer.wrap(in[r]), ReduceOp.SUM));
        }
        for (CompletableFuture<Void> op : ops) {
            op.get(60, TimeUnit.SECONDS);
        }
        assertThat(in[0]).isEqualTo(expected);
        assertThat(in[1]).isEqualTo(expected);
        assertThat(contributions(switches.get(1))).isPositive();
        // A barrier goes through shard 0; each rank's returns once both entered it.
        CompletableFuture<Void> other = CompletableFuture.runAsync(workers.get(1)::barrier);
        workers.get(0).barrier();
        other.get(30, TimeUnit.SECONDS);
    }

    @Test
    void aShardThatDiesMovesAloneToItsStandbyAndTheResultIsExact() throws Exception {
        String shard0 = startSwitch();
        String shard1 = startSwitch();
        String standby1 = startSwitch();
        int n = 2;
        join(n, shard0 + ";" + shard1 + "," + standby1, b -> b.threads(2));
        int length = 4 << 20;
        float[][] in = TestTensors.floatsByRank(41, n, length);
        float[] expected = ReferenceAllReduce.floats(in, K, ReduceOp.SUM);
        float[][] out = new float[n][length];
        List<CompletableFuture<Void>> ops = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            ops.add(workers.get(r).allReduceAsync(FloatBuffer.wrap(in[r]), FloatBuffer.wrap(out[r]), ReduceOp.SUM));
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (contributions(switches.get(1)) < length / K / 16 && System.nanoTime() < deadline) {
            Thread.yield();
        }
        // Shard 1 takes nothing more from here on, so it dies with its part unfinished however fast the rest runs.
        switches.get(1).dataplane().setDropProbabilities(1.0, 0.0);
        assertThat(ops).as("the all-reduce is still running when shard 1 dies").noneMatch(CompletableFuture::isDone);
        switches.get(1).close();
        for (CompletableFuture<Void> op : ops) {
            op.get(60, TimeUnit.SECONDS);
        }
        for (int r = 0; r < n; r++) {
            assertThat(out[r]).as("rank %d", r).isEqualTo(expected);
            WorkerStatistics.Snapshot s = workers.get(r).statistics().snapshot();
            assertThat(s.failovers()).as("failovers of rank %d: shard 1 only", r).isEqualTo(1);
            assertThat(s.blocksRedone() + s.blocksCopied()).as("blocks done again: some of shard 1's, none of shard 0's")
                    .isPositive().isLessThanOrEqualTo(length / K / 2);
        }
        assertThat(contributions(switches.get(2))).as("the standby took shard 1's work").isPositive();
        // The job goes on over shard 0 and shard 1's standby.
        int[][] next = TestTensors.intsByRank(42, n, 3 * K);
        int[] expectedNext = ReferenceAllReduce.ints(next, ReduceOp.SUM);
        List<CompletableFuture<Void>> more = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            more.add(workers.get(r).allReduceAsync(IntBuffer.wrap(next[r]), IntBuffer.wrap(next[r]), ReduceOp.SUM));
        }
        for (CompletableFuture<Void> op : more) {
            op.get(60, TimeUnit.SECONDS);
        }
        assertThat(next[0]).isEqualTo(expectedNext);
        assertThat(next[1]).isEqualTo(expectedNext);
    }

    @Test
    void aShardWithoutStandbyThatDiesFailsTheAllReduceSayingWhichSwitchIsGone() throws Exception {
        String shard0 = startSwitch();
        String shard1 = startSwitch();
        join(2, shard0 + ";" + shard1, b -> b.threads(2));
        switches.get(1).close();
        float[][] in = TestTensors.floatsByRank(43, 2, 8 * K);
        List<CompletableFuture<Void>> ops = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            ops.add(workers.get(r).allReduceAsync(FloatBuffer.wrap(in[r]), FloatBuffer.wrap(in[r]), ReduceOp.SUM));
        }
        for (CompletableFuture<Void> op : ops) {
            assertThatThrownBy(() -> op.get(60, TimeUnit.SECONDS)).hasCauseInstanceOf(io.switchml.api.SwitchUnavailableException.class)
                    .hasMessageContaining(shard1.substring(shard1.indexOf(':') + 1));
        }
    }

    @Test
    void aSingleSwitchContextRefusesShardsAndShardsExcludeControllers() {
        SwitchMLConfig sharded = SwitchMLConfig.builder().shards("127.0.0.1:1;127.0.0.1:2").rank(0).workers(1).build();
        assertThatThrownBy(() -> SwitchMLContext.connect(sharded)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ShardedSwitchML.connect");
        assertThatThrownBy(() -> SwitchMLConfig.builder().shards("127.0.0.1:1").controllers("127.0.0.1:2").rank(0)
                .workers(1).build()).hasMessageContaining("exclude each other");
        assertThatThrownBy(() -> SwitchMLConfig.builder().shards("127.0.0.1:1;;127.0.0.1:2").rank(0).workers(1).build())
                .hasMessageContaining("empty shard");
    }
}
