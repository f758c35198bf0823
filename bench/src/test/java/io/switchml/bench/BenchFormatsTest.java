package io.switchml.bench;

import io.switchml.api.ReduceOp;
import io.switchml.collectives.Algorithm;
import io.switchml.collectives.Compression;
import io.switchml.collectives.QsgdReference;
import io.switchml.collectives.TopKReference;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.ExactSum;
import io.switchml.launch.PeerEndpoints;
import io.switchml.protocol.DataType;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** Sizes, the worker line protocols, algorithm names, the statistics of a row, and the verifiers. */
class BenchFormatsTest {
    @Test
    void sizesWithUnitsAndRanges() {
        assertThat(ByteSize.parse("64MiB")).isEqualTo(64L << 20);
        assertThat(ByteSize.parse("4k")).isEqualTo(4096);
        assertThat(ByteSize.parse("1GB")).isEqualTo(1_000_000_000L);
        assertThat(ByteSize.parse("1.5KiB")).isEqualTo(1536);
        assertThat(ByteSize.parse("12")).isEqualTo(12);
        assertThat(ByteSize.parseList("1MiB:8MiB")).containsExactly(1L << 20, 2L << 20, 4L << 20, 8L << 20);
        assertThat(ByteSize.parseList("4KiB,1MiB")).containsExactly(4096L, 1L << 20);
        assertThat(ByteSize.format(64L << 20)).isEqualTo("64MiB");
        assertThat(ByteSize.format(1536)).isEqualTo("1.5KiB");
        assertThatThrownBy(() -> ByteSize.parse("5 parsecs")).hasMessageContaining("unknown unit");
        assertThatThrownBy(() -> ByteSize.parse("lots")).hasMessageContaining("not a number");
        assertThatThrownBy(() -> ByteSize.parseList("8MiB:1MiB")).hasMessageContaining("range");
    }

    @Test
    void reportsAndPlansSurviveTheirLineFormats() {
        SizeReport report = new SizeReport(3, 4096, new long[]{5, 7, 6}, true, -42L, 9, 100);
        SizeReport back = SizeReport.parse(report.toLine());
        assertThat(back.rank()).isEqualTo(3);
        assertThat(back.timesNanos()).containsExactly(5, 7, 6);
        assertThat(back.verified()).isTrue();
        assertThat(back.digest()).isEqualTo(-42L);
        assertThat(back.retransmissions()).isEqualTo(9);
        assertThat(back.bytesSent()).as("unknown").isEqualTo(-1);
        assertThat(SizeReport.parse(new SizeReport(0, 4, new long[]{1}, null, 0, 0, 0, 12345).toLine()).bytesSent())
                .isEqualTo(12345);
        assertThat(report.toLine()).startsWith("RESULT {\"rank\":3,\"bytes\":4096,\"timesNanos\":[5,7,6],");
        assertThatThrownBy(() -> SizeReport.parse("RESULT rank=0 bytes=4"))
                .hasMessageStartingWith("a RESULT line that is not a SizeReport in JSON");
        assertThat(SizeReport.parse(new SizeReport(0, 4, new long[]{1}, null, 0, 0, 0).toLine()).verified()).isNull();
        assertThat(SizeReport.parse("some log line")).isNull();

        WorkerPlan plan = new WorkerPlan(Map.of("switchml.rank", "1"), List.of(4L, 8L), 3, 1, true, DataType.INT32, 9);
        assertThat(WorkerPlan.fromArguments(new String[]{plan.toJson()})).isEqualTo(plan);
        assertThatThrownBy(() -> new WorkerPlan(Map.of(), List.of(6L), 1, 0, false, DataType.FLOAT32, 1))
                .hasMessageContaining("multiple of 4");
        WorkerPlan ring = new WorkerPlan(Map.of("switchml.rank", "0"), List.of(4L), 1, 0, false, DataType.FLOAT32, 2,
                AllReduceAlgorithm.named("ring"));
        assertThat(ring.toJson()).contains("\"algorithm\":\"ring\"", "\"pauseMs\":0");
        WorkerPlan pausing = new WorkerPlan(Map.of("switchml.rank", "0"), List.of(4L), 2, 0, false, DataType.INT32, 2,
                AllReduceAlgorithm.switchMl(), io.switchml.collectives.Compression.DEFAULTS, 10_000);
        assertThat(WorkerPlan.fromArguments(new String[]{pausing.toJson()}).pauseMs()).isEqualTo(10_000);
        assertThat(WorkerPlan.fromArguments(new String[]{ring.toJson()})).isEqualTo(ring);
        assertThat(plan.algorithm()).isSameAs(AllReduceAlgorithm.switchMl());
        WorkerPlan topk = new WorkerPlan(Map.of("switchml.rank", "0"), List.of(4L), 1, 0, false, DataType.FLOAT32, 2,
                AllReduceAlgorithm.named("topk"), Compression.DEFAULTS.withRatio(0.25).withWarmup(3));
        assertThat(topk.toJson()).contains("\"algorithm\":\"topk\"", "\"ratio\":0.25", "\"warmup\":3");
        assertThatThrownBy(() -> WorkerPlan.fromArguments(new String[]{"sizes=4"})).hasMessageContaining("benchmark worker: the plan is not a WorkerPlan in JSON");
        String badSize = topk.toJson().replace("\"sizes\":[4]", "\"sizes\":[6]");
        assertThatThrownBy(() -> WorkerPlan.fromArguments(new String[]{badSize}))
                .hasMessageContaining("benchmark worker: the plan is refused: tensor size 6 B must be");
        assertThat(WorkerPlan.fromArguments(new String[]{topk.toJson()})).isEqualTo(topk);
    }

    /** The verifiers of the compression baselines accept their references' results and nothing else. */
    @Test
    void theTopKAndQsgdVerifiersAgreeWithTheCollectivesReferences() {
        TensorGenerator generator = new TensorGenerator(3);
        Compression c = Compression.DEFAULTS.withBucket(100).withRatio(0.05);
        for (int n = 1; n <= 4; n++) {
            for (int length : new int[]{1, 99, 4097, 12_289}) {
                float[][] floats = new float[n][length];
                for (int r = 0; r < n; r++) {
                    generator.fill(r, floats[r], 0, length);
                }
                for (int rounds : new int[]{1, 3}) {
                    float[] topk = TopKReference.floats(floats, rounds, c, ReduceOp.SUM);
                    float[] qsgd = QsgdReference.floats(floats, rounds - 1, c, ReduceOp.SUM);
                    ResultVerifier topkVerifier = verifier("topk", generator, n, c, rounds);
                    ResultVerifier qsgdVerifier = verifier("qsgd", generator, n, c, rounds);
                    assertThat(topkVerifier.firstMismatch(topk, length)).as("topk n=%d length=%d", n, length).isEqualTo(-1);
                    assertThat(qsgdVerifier.firstMismatch(qsgd, length)).as("qsgd n=%d length=%d", n, length).isEqualTo(-1);
                    int last = length - 1;
                    topk[last] = Float.intBitsToFloat(Float.floatToRawIntBits(topk[last]) ^ 1);
                    qsgd[last] = Float.intBitsToFloat(Float.floatToRawIntBits(qsgd[last]) ^ 1);
                    assertThat(topkVerifier.firstMismatch(topk, length)).isEqualTo(last);
                    assertThat(qsgdVerifier.firstMismatch(qsgd, length)).isEqualTo(last);
                }
                if (length > 100) {
                    // A verifier of the wrong round or step refuses the result.
                    float[] three = TopKReference.floats(floats, 3, c, ReduceOp.SUM);
                    assertThat(verifier("topk", generator, n, c, 2).firstMismatch(three, length)).isNotNegative();
                    float[] step2 = QsgdReference.floats(floats, 2, c, ReduceOp.SUM);
                    assertThat(verifier("qsgd", generator, n, c, 2).firstMismatch(step2, length)).isNotNegative();
                }
            }
        }
    }

    @Test
    void wireBytesAreTheMeanPerWorkerAndIteration() {
        BenchRow row = BenchRow.of("topk", 2, "float32", List.of(
                new SizeReport(0, 1_000_000, new long[]{1, 2}, null, 1, 0, 0, 300),
                new SizeReport(1, 1_000_000, new long[]{1, 2}, null, 1, 0, 0, 500)));
        assertThat(row.wireBytes()).isEqualTo(200);
        assertThat(row.wireRatio()).isEqualTo(0.0002);
        assertThat(row.withRate(1000).wireBytes()).isEqualTo(200);
        BenchRow unknown = BenchRow.of("ring", 2, "float32", List.of(
                new SizeReport(0, 4, new long[]{1}, null, 1, 0, 0, 10), new SizeReport(1, 4, new long[]{1}, null, 1, 0, 0)));
        assertThat(unknown.wireBytes()).isNull();
        assertThat(unknown.wireRatio()).isNull();
        assertThat(AllReduceAlgorithm.named("QSGD").id()).isEqualTo("qsgd");
        assertThat(AllReduceAlgorithm.named("topk").compressed()).isTrue();
        assertThat(AllReduceAlgorithm.named("topk").needsSwitch()).isFalse();
        assertThat(AllReduceAlgorithm.named("ring").compressed()).isFalse();
    }

    @Test
    void systemCallsAreAWorkersMeanAndTheSwitchsPerAllReduce() {
        BenchRow row = BenchRow.of("switchml", 2, "float32", List.of(
                new SizeReport(0, 4096, new long[]{1, 2}, null, 1, 0, 0, 300, 1000, 7000),
                new SizeReport(1, 4096, new long[]{1, 2}, null, 1, 0, 0, 300, 600, -1)));
        assertThat(row.workerSyscalls()).isEqualTo(400); // (1000 + 600) / 2 workers / 2 iterations
        assertThat(row.switchSyscalls()).isEqualTo(3500); // rank 0's count of the switch, per iteration
        assertThat(row.withRate(1000).withTopology("fabric").switchSyscalls()).isEqualTo(3500);
        assertThat(BenchFormat.TABLE.line(row)).contains(" 400/3500 ");
        assertThat(BenchFormat.JSON.line(row)).contains("\"worker_syscalls\": 400", "\"switch_syscalls\": 3500");

        BenchRow ring = BenchRow.of("ring", 2, "float32", List.of(
                new SizeReport(0, 4096, new long[]{1}, null, 1, 0, 0, 300, 50, -1),
                new SizeReport(1, 4096, new long[]{1}, null, 1, 0, 0, 300, 70, -1)));
        assertThat(ring.switchSyscalls()).as("no switch").isNull();
        assertThat(BenchFormat.TABLE.line(ring)).contains(" 60/- ");

        BenchRow uncounted = BenchRow.of("ring", 2, "float32", List.of(
                new SizeReport(0, 4, new long[]{1}, null, 1, 0, 0, 10), new SizeReport(1, 4, new long[]{1}, null, 1, 0, 0, 10)));
        assertThat(uncounted.workerSyscalls()).isNull();
        assertThat(BenchFormat.TABLE.line(uncounted)).endsWith(" -       -                     -");
        assertThat(BenchFormat.JSON.line(uncounted)).contains("\"worker_syscalls\": null", "\"switch_syscalls\": null");
    }

    @Test
    void cpuIsRankZerosMachineReadingAndDatagramsAWorkersMeanPerAllReduceWithPacketsPerDatagram() {
        // Two workers, two iterations: rank 0 read 3 s of busy CPU over both; each worker sent 140 packets in 20
        // datagrams (runs of 7) and received 140 results, rank 0 in 10 datagrams and rank 1 in 30.
        BenchRow row = BenchRow.of("switchml", 2, "float32", List.of(
                new SizeReport(0, 4096, new long[]{1, 2}, true, 1, 0, 140, 300, -1, -1, 3_000_000_000L,
                        new SizeReport.Datagrams(140, 20, 140, 10)),
                new SizeReport(1, 4096, new long[]{1, 2}, true, 1, 0, 140, 300, -1, -1, -1,
                        new SizeReport.Datagrams(140, 20, 140, 30))));
        assertThat(row.cpuSeconds()).isEqualTo(1.5); // per all-reduce
        assertThat(row.datagrams()).isEqualTo(new BenchRow.Datagrams(10, 7, 10, 7)); // (20 + 20) / 2 / 2, 280 / 40
        assertThat(BenchFormat.TABLE.line(row)).endsWith("    1.50        10/10(7.0/7.0)");
        assertThat(BenchFormat.JSON.line(row)).contains("\"cpu_s\": 1.5000", "\"datagrams_out\": 10.0000",
                "\"packets_per_datagram_out\": 7.0000", "\"datagrams_in\": 10.0000", "\"packets_per_datagram_in\": 7.0000");
        assertThat(row.withRate(1000).withTopology("fabric")).extracting(BenchRow::cpuSeconds, BenchRow::datagrams)
                .containsExactly(1.5, new BenchRow.Datagrams(10, 7, 10, 7));
        // A report line carries both through its JSON.
        SizeReport parsed = SizeReport.parse(new SizeReport(0, 4, new long[]{1}, null, 0, 0, 7, 12, -1, -1, 5,
                new SizeReport.Datagrams(7, 1, 7, 2)).toLine());
        assertThat(parsed.cpuNanos()).isEqualTo(5);
        assertThat(parsed.datagrams()).isEqualTo(new SizeReport.Datagrams(7, 1, 7, 2));

        BenchRow ring = BenchRow.of("ring", 2, "float32", List.of(
                new SizeReport(0, 4096, new long[]{1}, null, 1, 0, 0, 300, -1, -1, 10_000_000L, null),
                new SizeReport(1, 4096, new long[]{1}, null, 1, 0, 0, 300, -1, -1, -1, null)));
        assertThat(ring.cpuSeconds()).isEqualTo(0.01);
        assertThat(ring.datagrams()).as("TCP: no datagrams").isNull();
    }

    @Test
    void theMachinesBusyTimeLeavesIdleAndIowaitOut() {
        // user nice system idle iowait irq softirq steal guest guest_nice, in ticks of 10 ms
        assertThat(MachineCpu.busyNanos("cpu  100 5 50 9000 300 1 4 2 0 0")).isEqualTo(162 * 10_000_000L);
        assertThat(MachineCpu.busyNanos()).as("this machine's, where /proc/stat exists").satisfiesAnyOf(
                v -> assertThat(v).isPositive(), v -> assertThat(MachineCpu.PROC_STAT).doesNotExist());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MachineCpu.busyNanos("intr 1 2 3"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("/proc/stat");
    }

    @Test
    void endpointsSurviveTheirLineFormats() {
        PeerEndpoints.Endpoint mine = new PeerEndpoints.Endpoint(2, new InetSocketAddress("127.0.0.1", 41000),
                new InetSocketAddress("127.0.0.1", 41001));
        assertThat(PeerEndpoints.Endpoint.parse(mine.toLine())).isEqualTo(mine);
        PeerEndpoints.Endpoint ringRank = new PeerEndpoints.Endpoint(0, new InetSocketAddress("127.0.0.1", 41002), null);
        assertThat(PeerEndpoints.Endpoint.parse(ringRank.toLine())).isEqualTo(ringRank);
        assertThat(PeerEndpoints.Endpoint.parse("RESULT rank=0")).isNull();

        PeerEndpoints ps = new PeerEndpoints(List.of(mine.worker(), ringRank.worker()), List.of(mine.server()));
        assertThat(PeerEndpoints.parse(ps.toLine())).isEqualTo(ps);
        PeerEndpoints ring = new PeerEndpoints(List.of(mine.worker()), List.of());
        assertThat(PeerEndpoints.parse(ring.toLine())).isEqualTo(ring);
        assertThatThrownBy(() -> PeerEndpoints.parse(null)).hasMessageContaining("end of standard input");
        assertThatThrownBy(() -> PeerEndpoints.parse("hello")).hasMessageContaining("PEERS");
    }

    @Test
    void algorithmsByName() {
        assertThat(AllReduceAlgorithm.named(" Ring ")).isSameAs(AllReduceAlgorithm.named("ring"));
        assertThat(AllReduceAlgorithm.named("ps").exchangesEndpoints()).isTrue();
        assertThat(AllReduceAlgorithm.named("switchml").needsSwitch()).isTrue();
        assertThat(AllReduceAlgorithm.all()).extracting(AllReduceAlgorithm::id)
                .startsWith("switchml", "ring", "ps", "topk", "qsgd");
        assertThatThrownBy(() -> AllReduceAlgorithm.named("allgather"))
                .hasMessageStartingWith("unknown all-reduce algorithm 'allgather'; known: switchml, ring, ps, topk, qsgd");
    }

    @Test
    void aRowTakesTheSlowestWorkerPerIteration() {
        List<SizeReport> reports = List.of(
                new SizeReport(0, 1_000_000, new long[]{1_000_000, 4_000_000, 2_000_000}, true, 1, 2, 0),
                new SizeReport(1, 1_000_000, new long[]{3_000_000, 1_000_000, 2_000_000}, true, 1, 3, 0));
        BenchRow row = BenchRow.of("switchml", 2, "float32", reports);
        // Slowest per iteration: 3, 4, 2 ms.
        assertThat(row.minMs()).isEqualTo(2.0);
        assertThat(row.medianMs()).isEqualTo(3.0);
        assertThat(row.maxMs()).isEqualTo(4.0);
        assertThat(row.retransmissions()).isEqualTo(5);
        assertThat(row.verified()).isTrue();
        assertThat(row.algbwGbps()).isCloseTo(8e6 / 3e-3 / 1e9, within(1e-9));
        assertThat(row.busbwGbps()).isCloseTo(row.algbwGbps(), within(1e-9)); // 2(n-1)/n = 1 for n = 2
        assertThat(row.atePerSecond()).isCloseTo(250_000 / 3e-3, within(1e-3));
        assertThat(BenchFormat.JSON.line(row)).contains("\"algo\": \"switchml\"", "\"workers\": 2", "\"bytes\": 1000000",
                "\"median_ms\": 3.0000", "\"verified\": true", "\"retransmissions\": 5");
        List<SizeReport> differing = List.of(reports.get(0),
                new SizeReport(1, 1_000_000, new long[]{1, 1, 1}, true, 2, 0, 0));
        assertThat(BenchRow.of("switchml", 2, "float32", differing).verified()).as("digests differ").isFalse();
    }

    @Test
    void theVerifierFindsASingleWrongBit() {
        TensorGenerator generator = new TensorGenerator(5);
        int length = 3000;
        float[][] inputs = new float[3][length];
        for (int r = 0; r < 3; r++) {
            generator.fill(r, inputs[r], 0, length);
        }
        float[] result = io.switchml.api.ReferenceAllReduce.floats(inputs, 256, io.switchml.api.ReduceOp.SUM);
        ResultVerifier verifier = ResultVerifier.of(AllReduceAlgorithm.switchMl(), generator,
                new ExactSum.Context(3, 256, 32, Compression.DEFAULTS, 1));
        assertThat(verifier.firstMismatch(result, length)).isEqualTo(-1);
        result[2999] = Float.intBitsToFloat(Float.floatToRawIntBits(result[2999]) ^ 1);
        assertThat(verifier.firstMismatch(result, length)).isEqualTo(2999);
    }

    /** Odd lengths across blocks of the verifier (4096) and chunks of the ring, float32 and int32, 1 to 5 ranks. */
    @Test
    void theRingAndParameterServerVerifiersAgreeWithTheCollectivesReferences() {
        TensorGenerator generator = new TensorGenerator(11);
        for (int n = 1; n <= 5; n++) {
            for (int length : new int[]{1, 3, 4097, 12_289}) {
                float[][] floats = new float[n][length];
                int[][] ints = new int[n][length];
                for (int r = 0; r < n; r++) {
                    generator.fill(r, floats[r], 0, length);
                    generator.fill(r, ints[r], 0, length);
                }
                for (Algorithm algorithm : List.of(Algorithm.RING, Algorithm.PARAMETER_SERVER)) {
                    ResultVerifier verifier = verifier(algorithm.id(), generator, n, Compression.DEFAULTS, 1);
                    float[] result = algorithm.reference(floats, ReduceOp.SUM);
                    int[] intResult = algorithm.reference(ints, ReduceOp.SUM);
                    assertThat(verifier.firstMismatch(result, length)).as("%s n=%d length=%d", algorithm, n, length).isEqualTo(-1);
                    assertThat(verifier.firstMismatch(intResult, length)).isEqualTo(-1);
                    int last = length - 1;
                    result[last] = Float.intBitsToFloat(Float.floatToRawIntBits(result[last]) ^ 1);
                    intResult[last] ^= 1;
                    assertThat(verifier.firstMismatch(result, length)).isEqualTo(last);
                    assertThat(verifier.firstMismatch(intResult, length)).isEqualTo(last);
                }
            }
        }
        // The ring and the servers add in different orders: with 5 ranks (at least 2 roundings: the generator's values
        // have 24 bits, so sums of 3 are rounded once) some results differ, and each verifier accepts only its own.
        float[][] five = new float[5][12_289];
        for (int r = 0; r < 5; r++) {
            generator.fill(r, five[r], 0, five[r].length);
        }
        float[] ps = Algorithm.PARAMETER_SERVER.reference(five, ReduceOp.SUM);
        float[] ring = Algorithm.RING.reference(five, ReduceOp.SUM);
        assertThat(verifier("ring", generator, 5, Compression.DEFAULTS, 1).firstMismatch(ps, ps.length)).isNotNegative();
        assertThat(verifier("ps", generator, 5, Compression.DEFAULTS, 1).firstMismatch(ring, ring.length)).isNotNegative();
    }

    /** The bench's verifier of a registered algorithm, as a worker makes it after the given rounds. */
    private static ResultVerifier verifier(String algorithm, TensorGenerator generator, int workers, Compression compression,
                                           int rounds) {
        return ResultVerifier.of(AllReduceAlgorithm.named(algorithm), generator,
                new ExactSum.Context(workers, 256, 32, compression, rounds));
    }
}
