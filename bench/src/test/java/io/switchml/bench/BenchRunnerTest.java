package io.switchml.bench;

import io.switchml.protocol.DataType;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The benchmark end to end: an embedded switch and worker JVM processes, results verified exactly. */
class BenchRunnerTest {
    private final ByteArrayOutputStream progress = new ByteArrayOutputStream();

    private BenchOptions options(List<Integer> workers, List<Long> sizes, DataType type, Map<String, String> config) {
        return new BenchOptions(workers, sizes, 2, 1, true, type, null, config, 1, 3, Duration.ofMinutes(3));
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
        assertThat(progress.toString(StandardCharsets.UTF_8)).contains("starting 3 worker process(es)");
    }

    @Test
    void workerProcessesGetExactIntSumsWithSwitchMlSizedPackets() throws Exception {
        List<BenchRow> rows = new BenchRunner(options(List.of(2), List.of(1000L, 65_540L), DataType.INT32,
                Map.of("switchml.elementsPerPacket", "64", "switchml.threads", "2")),
                new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { });
        assertThat(rows).extracting(BenchRow::verified).containsExactly(true, true);
        assertThat(rows).extracting(BenchRow::type).containsOnly("int32");
    }

    @Test
    void aFailingWorkerEndsTheBenchWithItsError() {
        BenchOptions bad = options(List.of(2), List.of(4096L), DataType.FLOAT32, Map.of("switchml.slotsPerThread", "0"));
        assertThatThrownBy(() -> new BenchRunner(bad, new PrintStream(progress, true, StandardCharsets.UTF_8)).run(r -> { }))
                .isInstanceOf(BenchException.class)
                .hasMessageContaining("worker process")
                .hasMessageContaining("switchml.slotsPerThread = 0");
    }
}
