package io.switchml.bench;

import io.switchml.api.ReduceOp;
import io.switchml.collectives.Compression;
import io.switchml.collectives.RingReference;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.ExactSum;
import io.switchml.launch.LaunchException;
import io.switchml.protocol.DataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The benchmark end to end: worker JVM processes through an embedded switch or the ring and parameter-server
 * baselines, results verified exactly.
 */
class BenchRunnerIT {
    private final ByteArrayOutputStream progress = new ByteArrayOutputStream();

    private BenchOptions options(List<Integer> workers, List<Long> sizes, DataType type, Map<String, String> config) {
        return new BenchOptions(workers, sizes, 2, 1, true, type, null, config, 1, 3, Duration.ofMinutes(3));
    }

    private BenchOptions options(List<Integer> workers, List<Long> sizes, DataType type, List<AllReduceAlgorithm> algorithms) {
        return new BenchOptions(workers, sizes, 2, 1, true, type, null, Map.of(), 1, 3, Duration.ofMinutes(3), 0, algorithms);
    }

    @Test
    void workerProcessesGetExactBitIdenticalFloatSums() throws Exception {
        List<BenchRow> streamed = new ArrayList<>();
        List<BenchRow> rows = new BenchRunner(options(List.of(1, 3), List.of(4L, 8196L, (1L << 20) + 4), DataType.FLOAT32,
                Map.of()), new PrintStream(progress, true, StandardCharsets.UTF_8)).run(streamed::add);
        assertThat(rows).hasSize(6).isEqualTo(streamed);
        assertThat(rows).allSatisfy(r -> {
            assertThat(r.verified()).as("%s", r).isTrue();
            assertThat(r.iterations()).isEqualTo(2);
            assertThat(r.minMs()).isPositive().isLessThanOrEqualTo(r.medianMs());
            assertThat(r.maxMs()).isGreaterThanOrEqualTo(r.medianMs());
        });
        assertThat(rows).extracting(BenchRow::workers).containsExactly(1, 1, 1, 3, 3, 3);
        assertThat(rows).as("worker processes on the switch's host").extracting(BenchRow::topology).containsOnly("shared-memory");
        assertThat(progress.toString(StandardCharsets.UTF_8)).contains("[3/6] switchml n=3: starting 3 worker processes",
                "[6/6] switchml n=3 1.0MiB done in ");
    }

    @Test
    void rowsSayTheSystemCallsOfEachSidePerAllReduce() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(SyscallCounter.unavailableReason() == null, "perf cannot count here");
        BenchOptions options = new BenchOptions(List.of(2), List.of(1L << 20), 2, 1, true, DataType.FLOAT32, null,
                Map.of(), 1, 3, Duration.ofMinutes(3), 0, List.of(AllReduceAlgorithm.switchMl(), AllReduceAlgorithm.named("ring")),
                null, Compression.DEFAULTS, 0, Sparsity.DENSE, true);
        List<BenchRow> rows = new BenchRunner(options, new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { });
        assertThat(rows).extracting(BenchRow::algo).containsExactly("switchml", "ring");
        assertThat(rows).allSatisfy(r -> assertThat(r.workerSyscalls()).as("%s", r).isPositive());
        assertThat(rows.get(0).switchSyscalls()).as("the embedded switch's").isPositive();
        assertThat(rows.get(1).switchSyscalls()).as("the ring has no switch").isNull();
    }

    @Test
    void workerProcessesGetExactIntSumsWithSwitchMlSizedPackets() throws Exception {
        List<BenchRow> rows = new BenchRunner(options(List.of(2), List.of(1000L, 65_540L), DataType.INT32,
                Map.of("switchml.elementsPerPacket", "64", "switchml.threads", "2")),
                new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { });
        assertThat(rows).extracting(BenchRow::verified).containsExactly(true, true);
        assertThat(rows).extracting(BenchRow::type).containsOnly("int32");

        List<BenchRow> udp = new BenchRunner(options(List.of(2), List.of(70_000L), DataType.INT32,
                Map.of("switchml.transport", "udp")), new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { });
        assertThat(udp).extracting(BenchRow::verified).containsExactly(true);
        assertThat(udp).extracting(BenchRow::topology).containsExactly("udp");
    }

    @Test
    void workerProcessesThatShareHostsGetTheHostSumsExactly() throws Exception {
        // Ranks 0 and 2 share a "host" (one agent, run by rank 0), rank 1 is one alone: the switch's job has two workers.
        List<BenchRow> rows = new BenchRunner(options(List.of(3), List.of(8196L, (1L << 20) + 4), DataType.FLOAT32,
                Map.of("switchml.hostLayout", "0,2/1")), new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { });
        assertThat(rows).extracting(BenchRow::verified).containsExactly(true, true);
        assertThat(progress.toString(StandardCharsets.UTF_8)).contains("switchml agent ready: job rank 0 of 2, for ranks [0, 2]");
    }

    @Test
    void workerProcessesShardedOverThreeEmbeddedSwitchesGetExactSums() throws Exception {
        BenchOptions options = new BenchOptions(List.of(3), List.of(4L, (1L << 20) + 4), 2, 1, true, DataType.FLOAT32,
                null, Map.of(), 1, 3, Duration.ofMinutes(3), 0, List.of(AllReduceAlgorithm.switchMl()), null,
                io.switchml.collectives.Compression.DEFAULTS, 3);
        List<BenchRow> rows = new BenchRunner(options, new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { });
        assertThat(rows).extracting(BenchRow::verified).containsExactly(true, true);
        assertThat(rows).extracting(BenchRow::topology).containsOnly("3-shard");
        assertThat(progress.toString(StandardCharsets.UTF_8)).contains("embedded switch (shard 2)");
    }

    /** Worker processes through two leaves and a spine embedded in the bench (docs/ARCHITECTURE.md section 9). */
    @Test
    void workerProcessesGetExactSumsThroughTwoLeavesAndASpine() throws Exception {
        List<BenchRow> rows = new BenchRunner(options(List.of(3), List.of(8196L, (1L << 20) + 4), DataType.FLOAT32,
                Map.of()), new PrintStream(progress, true, StandardCharsets.UTF_8), false, 2).run(r -> { });
        assertThat(rows).extracting(BenchRow::verified).containsExactly(true, true);
        assertThat(rows).extracting(BenchRow::topology).containsOnly("2-leaves");
        assertThat(progress.toString(StandardCharsets.UTF_8)).contains("embedded hierarchy: spine controller 127.0.0.1:",
                ", 2 leaves at ");
    }

    @Test
    void moreLeavesThanWorkersAreRefused() {
        assertThatThrownBy(() -> new BenchRunner(options(List.of(1, 3), List.of(4L), DataType.FLOAT32, Map.of()),
                new PrintStream(progress, true, StandardCharsets.UTF_8), false, 2))
                .hasMessageContaining("--leaves 2 needs at least one worker per leaf; --workers 1 has fewer");
    }

    /**
     * The compression baselines as worker processes: results verified against their references after the warm-up and
     * timed rounds on the same buffers (so the residuals and the seeded rounding are replayed), settings passed
     * through, and the bytes each worker sent reported (a fraction of the ring's for float32; int32 goes uncompressed).
     */
    @ParameterizedTest
    @EnumSource(value = DataType.class, names = {"FLOAT32", "INT32"})
    void topKAndQsgdWorkerProcessesGetTheirReferenceResults(DataType type) throws Exception {
        List<Long> sizes = List.of(4L, 4100L, (1L << 20) + 4);
        io.switchml.collectives.Compression compression = io.switchml.collectives.Compression.DEFAULTS.withRatio(0.02)
                .withLevels(3).withBucket(128).withWarmup(2);
        BenchOptions options = new BenchOptions(List.of(1, 3), sizes, 2, 1, true, type, null, Map.of(), 1, 3,
                Duration.ofMinutes(3), 0, List.of(AllReduceAlgorithm.named("topk"), AllReduceAlgorithm.named("qsgd"), AllReduceAlgorithm.named("ring")), null,
                compression);
        List<BenchRow> rows = new BenchRunner(options, new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { });
        assertThat(rows).hasSize(18).allSatisfy(r -> {
            assertThat(r.verified()).as("%s", r).isTrue();
            assertThat(r.wireBytes()).as("%s", r).isNotNull();
        });
        BenchRow ring = rows.stream().filter(r -> r.algo().equals("ring") && r.workers() == 3 && r.bytes() > 1 << 20)
                .findFirst().orElseThrow();
        for (BenchRow r : rows) {
            if (r.workers() == 1) {
                assertThat(r.wireBytes()).as("one worker sends nothing: %s", r).isZero();
            } else if (r.bytes() > 1 << 20 && type == DataType.FLOAT32 && !r.algo().equals("ring")) {
                assertThat(r.wireRatio()).as("%s", r).isLessThan(ring.wireRatio() / 3);
            } else if (r.bytes() > 1 << 20) {
                assertThat(r.wireRatio()).as("int32 goes through the ring: %s", r).isCloseTo(4.0 / 3, org.assertj.core.api.Assertions.within(0.01));
            }
        }
        assertThat(progress.toString(StandardCharsets.UTF_8))
                .contains("topk n=3 (top-k 2 % with error feedback, warm-up 2 steps): starting 3 worker processes",
                        "qsgd n=3 (QSGD s=3 (3 bits), buckets of 128, l2 norm, seed 1)")
                .doesNotContain("embedded switch");
    }

    /** 1 element (fewer than ranks), 257 (odd, not a multiple of 3), 2^18 + 1 (chunks over several segments). */
    @ParameterizedTest
    @EnumSource(value = DataType.class, names = {"FLOAT32", "INT32"})
    void ringAndParameterServerWorkerProcessesGetTheirReferenceResultsWithoutASwitch(DataType type) throws Exception {
        List<Long> sizes = List.of(4L, 1028L, (1L << 20) + 4);
        List<BenchRow> rows = new BenchRunner(options(List.of(1, 3), sizes, type, List.of(AllReduceAlgorithm.named("ring"), AllReduceAlgorithm.named("ps"))),
                new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { });
        assertThat(rows).hasSize(12).allSatisfy(r -> {
            assertThat(r.verified()).as("%s", r).isTrue();
            assertThat(r.retransmissions()).isZero();
            assertThat(r.type()).isEqualTo(type.name().toLowerCase(java.util.Locale.ROOT));
        });
        assertThat(rows).extracting(BenchRow::algo, BenchRow::workers, BenchRow::bytes).containsExactly(
                tuple("ring", 1, 4L), tuple("ring", 1, 1028L), tuple("ring", 1, (1L << 20) + 4),
                tuple("ps", 1, 4L), tuple("ps", 1, 1028L), tuple("ps", 1, (1L << 20) + 4),
                tuple("ring", 3, 4L), tuple("ring", 3, 1028L), tuple("ring", 3, (1L << 20) + 4),
                tuple("ps", 3, 4L), tuple("ps", 3, 1028L), tuple("ps", 3, (1L << 20) + 4));
        assertThat(progress.toString(StandardCharsets.UTF_8)).contains("[9/12] ps n=3: starting 3 worker processes")
                .doesNotContain("embedded switch");
    }

    /**
     * A collective registered by one file of the tests ({@link HalvesAlgorithm}) runs in worker processes, is verified
     * against its own exact sums, and its results are not the ring's (the verifier would refuse one for the other).
     */
    @Test
    void aRegisteredTestOnlyAlgorithmRunsAndIsVerifiedLikeTheBuiltIns() throws Exception {
        AllReduceAlgorithm halves = AllReduceAlgorithm.named("halves");
        assertThat(AllReduceAlgorithm.ids()).endsWith(", halves");
        List<BenchRow> rows = new BenchRunner(options(List.of(3), List.of(4L, 40_964L), DataType.FLOAT32, List.of(halves)),
                new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { });
        assertThat(rows).extracting(BenchRow::algo, BenchRow::bytes, BenchRow::verified)
                .containsExactly(tuple("halves", 4L, true), tuple("halves", 40_964L, true));
        assertThat(rows.get(1).wireBytes()).as("bytes the halves' rings sent").isPositive();

        TensorGenerator generator = new TensorGenerator(1);
        int length = 10_241;
        float[][] inputs = new float[5][length];
        for (int r = 0; r < 5; r++) {
            generator.fill(r, inputs[r], 0, length);
        }
        ExactSum.Context five = new ExactSum.Context(5, 0, 32, Compression.DEFAULTS, 1);
        float[] ring = RingReference.floats(inputs, ReduceOp.SUM);
        assertThat(ResultVerifier.of(halves, generator, five).firstMismatch(ring, length))
                .as("the halves' sums are not the ring's").isNotNegative();
    }

    @Test
    void aFailingWorkerEndsTheBenchWithItsError() {
        BenchOptions bad = options(List.of(2), List.of(4096L), DataType.FLOAT32, Map.of("switchml.slotsPerThread", "0"));
        assertThatThrownBy(() -> new BenchRunner(bad, new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { }))
                .isInstanceOf(LaunchException.class) // the worker group's; BenchException is one too
                .hasMessageContaining("worker process")
                .hasMessageContaining("switchml.slotsPerThread = 0");
    }
}
