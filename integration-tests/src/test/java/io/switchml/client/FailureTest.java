package io.switchml.client;

import io.switchml.api.AllReduceTimeoutException;
import io.switchml.api.ControlPlaneException;
import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.api.SwitchMLException;
import io.switchml.api.UnrepresentableValueException;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What users see when things go wrong: clear errors in bounded time, never a silently wrong number. */
class FailureTest {
    @Test
    void unrepresentableValuesFailEveryWorkerButLeaveTheOthersExact() {
        int length = 3 * 2048;
        try (LocalCluster cluster = new LocalCluster(3)) {
            float[][] inputs = TestTensors.floatsByRank(11, 3, length);
            inputs[1][5000] = Float.NaN;          // block 2
            inputs[2][10] = Float.POSITIVE_INFINITY; // block 0
            float[] expected = ReferenceAllReduce.floats(inputs, 2048, ReduceOp.SUM);
            List<Object[]> outcomes = cluster.onEveryWorker((rank, ctx) -> {
                float[] out = new float[length];
                try {
                    ctx.allReduce(inputs[rank], out, ReduceOp.SUM);
                    return new Object[]{out, null};
                } catch (UnrepresentableValueException e) {
                    return new Object[]{out, e.getMessage()};
                }
            });
            for (int r = 0; r < 3; r++) {
                float[] out = (float[]) outcomes.get(r)[0];
                String message = (String) outcomes.get(r)[1];
                assertThat(message).as("rank %d", r).isNotNull().contains("2 block(s)").contains("[0, 2048)");
                assertThat(out).isEqualTo(expected);
                for (int i = 0; i < 2048; i++) {
                    assertThat(out[i]).isNaN();
                    assertThat(out[4096 + i]).isNaN();
                    assertThat(out[2048 + i]).isNotNaN();
                }
            }
            assertThat((String) outcomes.get(1)[1]).contains("element 5000 = NaN");
            assertThat((String) outcomes.get(2)[1]).contains("element 10 = Infinity");
            assertThat((String) outcomes.get(0)[1]).contains("not on this worker");
            // The job goes on: the next all-reduce is exact.
            AllReduceExactnessTest.checkFloatSum(cluster, 12, 9000, 2048);
        }
    }

    @Test
    void largeFiniteValuesBeyondTheFixedPointRangeAreRefusedToo() {
        try (LocalCluster cluster = new LocalCluster(2)) {
            List<Throwable> errors = cluster.onEveryWorker((rank, ctx) -> {
                float[] x = {rank == 0 ? Float.MAX_VALUE : 1f, 2f};
                try {
                    ctx.allReduce(x, ReduceOp.SUM);
                    return null;
                } catch (UnrepresentableValueException e) {
                    assertThat(x[0]).isNaN();
                    return e;
                }
            });
            assertThat(errors).allSatisfy(e -> assertThat(e).isNotNull());
        }
    }

    @Test
    void aMissingWorkerMakesTheOthersFailWithinTheOperationTimeout() throws Exception {
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.operationTimeout(Duration.ofMillis(1500)))) {
            SwitchMLContext alone = cluster.contexts.get(0);
            CompletableFuture<Void> op = alone.allReduceAsync(new float[50_000], ReduceOp.SUM);
            assertThatThrownBy(() -> op.get(20, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(AllReduceTimeoutException.class)
                    .cause().hasMessageContaining("timed out after 1500 ms").hasMessageContaining("job '")
                    .hasMessageContaining("another worker of the job may have died");
            assertThat(alone.statistics().snapshot().operationTimeouts()).isEqualTo(1);
            assertThatThrownBy(() -> alone.allReduce(new float[1], ReduceOp.SUM))
                    .isInstanceOf(SwitchMLException.class).hasMessageContaining("can no longer be used");
        }
    }

    @Test
    void workersWithDifferentSettingsCannotFormAJob() {
        try (AggregationService service = AggregationService.start(
                new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0)) {
            SwitchMLConfig.Builder base = SwitchMLConfig.builder().controller("127.0.0.1:" + service.controllerPort())
                    .job("mismatch").workers(2).joinTimeout(Duration.ofSeconds(2));
            CompletableFuture<SwitchMLContext> first = CompletableFuture.supplyAsync(
                    () -> SwitchMLContext.connect(base.rank(0).threads(1).build()));
            assertThatThrownBy(() -> {
                Thread.sleep(300);
                SwitchMLContext.connect(base.rank(1).threads(2).build());
            }).isInstanceOf(ControlPlaneException.class)
                    .hasMessageContaining("threads=2").hasMessageContaining("threads=1")
                    .hasMessageContaining("every worker of a job must be configured alike");
            assertThatThrownBy(first::join).hasCauseInstanceOf(ControlPlaneException.class)
                    .cause().hasMessageContaining("ranks [1] are not there");
        }
    }
}
