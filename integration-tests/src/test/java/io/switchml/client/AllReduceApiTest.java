package io.switchml.client;

import io.switchml.api.ControlPlaneException;
import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The API's entry points: buffers, in place, async, MEAN, barrier, broadcast, statistics. */
class AllReduceApiTest {
    @Test
    void directAndHeapBuffersInPlaceAndOutOfPlaceWithPositions() {
        int length = 5000;
        try (LocalCluster cluster = new LocalCluster(3)) {
            float[][] inputs = TestTensors.floatsByRank(3, 3, length);
            float[] expected = ReferenceAllReduce.floats(inputs, 2048, ReduceOp.SUM);
            List<float[]> results = cluster.onEveryWorker((rank, ctx) -> {
                // Direct input at position 3 of a larger buffer, summed in place.
                FloatBuffer direct = ByteBuffer.allocateDirect((length + 10) * 4).order(ByteOrder.nativeOrder()).asFloatBuffer();
                direct.position(3);
                direct.put(inputs[rank]);
                direct.position(3).limit(3 + length);
                ctx.allReduce(direct, direct, ReduceOp.SUM);
                assertThat(direct.position()).isEqualTo(3);
                float[] inPlace = new float[length];
                direct.get(inPlace);
                // Heap input into a direct output.
                FloatBuffer out = ByteBuffer.allocateDirect(length * 4).asFloatBuffer();
                ctx.allReduce(FloatBuffer.wrap(inputs[rank]), out, ReduceOp.SUM);
                float[] outOfPlace = new float[length];
                out.get(outOfPlace);
                assertThat(outOfPlace).isEqualTo(inPlace);
                return inPlace;
            });
            results.forEach(r -> assertThat(r).isEqualTo(expected));
        }
    }

    @Test
    void intBuffersAndArraysInPlace() {
        int length = 4099;
        try (LocalCluster cluster = new LocalCluster(2)) {
            int[][] inputs = TestTensors.intsByRank(5, 2, length);
            int[] expected = ReferenceAllReduce.ints(inputs, ReduceOp.SUM);
            List<int[]> results = cluster.onEveryWorker((rank, ctx) -> {
                IntBuffer direct = ByteBuffer.allocateDirect(length * 4).asIntBuffer();
                direct.put(inputs[rank]).flip();
                ctx.allReduce(direct, direct, ReduceOp.SUM);
                int[] array = inputs[rank].clone();
                ctx.allReduce(array, ReduceOp.SUM);
                int[] fromBuffer = new int[length];
                direct.get(fromBuffer);
                assertThat(fromBuffer).isEqualTo(array);
                return array;
            });
            results.forEach(r -> assertThat(r).isEqualTo(expected));
        }
    }

    @Test
    void meanDividesTheSumByTheNumberOfWorkers() {
        try (LocalCluster cluster = new LocalCluster(4)) {
            float[][] floats = TestTensors.floatsByRank(9, 4, 3000);
            float[] expectedFloats = ReferenceAllReduce.floats(floats, 2048, ReduceOp.MEAN);
            int[][] ints = {{7, -7, 100}, {0, 0, 1}, {1, 0, 1}, {0, 0, 1}};
            List<Object[]> results = cluster.onEveryWorker((rank, ctx) -> {
                float[] f = floats[rank].clone();
                ctx.allReduce(f, ReduceOp.MEAN);
                int[] i = ints[rank].clone();
                ctx.allReduce(i, ReduceOp.MEAN);
                return new Object[]{f, i};
            });
            for (Object[] r : results) {
                assertThat((float[]) r[0]).isEqualTo(expectedFloats);
                assertThat((int[]) r[1]).containsExactly(2, -1, 25); // 8/4, -7/4 truncated, 103/4
            }
            float[] sum = ReferenceAllReduce.floats(floats, 2048, ReduceOp.SUM);
            for (int i = 0; i < sum.length; i++) {
                assertThat(expectedFloats[i]).isCloseTo(sum[i] / 4, org.assertj.core.data.Offset.offset(Math.ulp(sum[i])));
            }
        }
    }

    @Test
    void asyncOperationsQueueAndCompleteInOrder() {
        try (LocalCluster cluster = new LocalCluster(2)) {
            float[][][] inputs = new float[5][][];
            for (int op = 0; op < inputs.length; op++) {
                inputs[op] = TestTensors.floatsByRank(100 + op, 2, 1000 + op * 3000);
            }
            List<float[][]> results = cluster.onEveryWorker((rank, ctx) -> {
                float[][] outs = new float[inputs.length][];
                CompletableFuture<?>[] futures = new CompletableFuture<?>[inputs.length];
                for (int op = 0; op < inputs.length; op++) {
                    outs[op] = inputs[op][rank].clone();
                    futures[op] = ctx.allReduceAsync(outs[op], ReduceOp.SUM);
                }
                CompletableFuture.allOf(futures).join();
                return outs;
            });
            for (int op = 0; op < inputs.length; op++) {
                float[] expected = ReferenceAllReduce.floats(inputs[op], 2048, ReduceOp.SUM);
                for (float[][] r : results) {
                    assertThat(r[op]).isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void emptyTensorCompletesAtOnce() {
        try (LocalCluster cluster = new LocalCluster(2)) {
            SwitchMLContext ctx = cluster.contexts.get(0);
            ctx.allReduce(new float[0], ReduceOp.SUM);
            assertThat(ctx.statistics().snapshot().packetsSent()).isZero();
        }
    }

    @Test
    void outputTooSmallIsRefused() {
        try (LocalCluster cluster = new LocalCluster(1)) {
            assertThatThrownBy(() -> cluster.contexts.get(0).allReduce(new float[10], new float[9], ReduceOp.SUM))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("output holds 9");
        }
    }

    @Test
    void barrierAndBroadcast() {
        try (LocalCluster cluster = new LocalCluster(3)) {
            List<String> values = cluster.onEveryWorker((rank, ctx) -> {
                ctx.barrier();
                byte[] mine = ("from rank " + rank).getBytes(StandardCharsets.UTF_8);
                return new String(ctx.broadcast(mine, 2), StandardCharsets.UTF_8);
            });
            assertThat(values).containsOnly("from rank 2");
        }
    }

    @Test
    void statisticsCountPacketsOfTheSchedule() {
        try (LocalCluster cluster = new LocalCluster(2)) {
            // 10 blocks with a 64-slot window: 10 bootstrap packets and 10 data packets each.
            cluster.onEveryWorker((rank, ctx) -> {
                ctx.allReduce(new float[10 * 2048], ReduceOp.SUM);
                return null;
            });
            WorkerStatistics.Snapshot s = cluster.contexts.get(1).statistics().snapshot();
            assertThat(s.packetsSent() - s.retransmissions()).isEqualTo(20);
            assertThat(s.packetsReceived() - s.duplicateResults()).isEqualTo(20);
            assertThat(s.operations()).isEqualTo(1);
            assertThat(s.smoothedRttNanos()).isPositive();
        }
    }

    @Test
    void closedContextRefusesWork() {
        LocalCluster cluster = new LocalCluster(1);
        SwitchMLContext ctx = cluster.contexts.get(0);
        cluster.close();
        assertThatThrownBy(() -> ctx.allReduce(new float[1], ReduceOp.SUM)).hasMessageContaining("closed");
    }

    @Test
    void joinWithNoControllerFailsClearly() {
        SwitchMLConfig config = SwitchMLConfig.builder().controller("127.0.0.1:1").rank(0).workers(1)
                .joinTimeout(Duration.ofSeconds(2)).build();
        assertThatThrownBy(() -> SwitchMLContext.connect(config))
                .isInstanceOf(ControlPlaneException.class)
                .hasMessageContaining("127.0.0.1:1").hasMessageContaining("switchml switch");
    }
}
