package io.switchml.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SmokeTest {
    @Test
    void twoWorkersSumFloats() {
        try (LocalCluster cluster = new LocalCluster(2)) {
            java.util.List<float[]> results = cluster.onEveryWorker((rank, ctx) -> {
                float[] data = new float[5000];
                for (int i = 0; i < data.length; i++) {
                    data[i] = i * (rank + 1);
                }
                ctx.allReduce(data, ReduceOp.SUM);
                return data;
            });
            for (int i = 0; i < 5000; i++) {
                assertThat(results.get(0)[i]).isCloseTo(3f * i, org.assertj.core.data.Offset.offset(0.01f));
            }
            assertThat(results.get(0)).isEqualTo(results.get(1));
        }
    }
}
