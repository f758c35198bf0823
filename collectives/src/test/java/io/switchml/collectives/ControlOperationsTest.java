package io.switchml.collectives;

import io.switchml.api.MismatchedOperationException;
import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;
import io.switchml.collectives.LocalJob.Layout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Barrier and broadcast over the same connections, interleaved with all-reduces. */
class ControlOperationsTest {
    static Stream<Arguments> jobs() {
        return Stream.of(Layout.ring(CollectiveConfig.DEFAULT_SEGMENT_BYTES), Layout.ps(0, true, 4096))
                .flatMap(layout -> Stream.of(1, 2, 3, 5).map(n -> Arguments.of(layout, n)));
    }

    @ParameterizedTest(name = "{0}, {1} workers")
    @MethodSource("jobs")
    void barrierHoldsEveryoneUntilTheLastArrives(Layout layout, int n) {
        try (LocalJob job = new LocalJob(layout, n)) {
            AtomicInteger arrived = new AtomicInteger();
            List<Integer> seenAfterBarrier = job.onEveryRank((rank, allReduce) -> {
                if (rank == n - 1) {
                    sleep(200); // the last rank is late: nobody may leave before it arrives
                }
                arrived.incrementAndGet();
                allReduce.barrier();
                return arrived.get();
            });
            assertThat(seenAfterBarrier).containsOnly(n);
        }
    }

    @ParameterizedTest(name = "{0}, {1} workers")
    @MethodSource("jobs")
    void broadcastFromEveryRootBetweenAllReduces(Layout layout, int n) {
        try (LocalJob job = new LocalJob(layout, n)) {
            for (int root = 0; root < n; root++) {
                int r0 = root;
                byte[] big = new byte[300_000];
                for (int i = 0; i < big.length; i++) {
                    big[i] = (byte) (i * 31 + r0);
                }
                List<Object[]> got = job.onEveryRank((rank, allReduce) -> {
                    byte[] small = allReduce.broadcast(("from " + rank).getBytes(StandardCharsets.UTF_8), r0);
                    int[] sum = {rank};
                    allReduce.allReduce(sum, ReduceOp.SUM);
                    byte[] empty = allReduce.broadcast(rank == r0 ? new byte[0] : null, r0);
                    allReduce.barrier();
                    byte[] large = allReduce.broadcast(rank == r0 ? big : new byte[3], r0);
                    return new Object[]{small, sum[0], empty, large};
                });
                for (Object[] g : got) {
                    assertThat(new String((byte[]) g[0], StandardCharsets.UTF_8)).isEqualTo("from " + root);
                    assertThat(g[1]).isEqualTo(n * (n - 1) / 2);
                    assertThat((byte[]) g[2]).isEmpty();
                    assertThat((byte[]) g[3]).isEqualTo(big);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}, {1} workers")
    @MethodSource("jobs")
    void ranksThatDisagreeOnTheOperationFail(Layout layout, int n) {
        if (n == 1) {
            return;
        }
        try (LocalJob job = new LocalJob(layout, n, b -> b.operationTimeout(Duration.ofSeconds(5)), Set.of(), List.of())) {
            List<Throwable> errors = job.onEveryRank((rank, allReduce) -> {
                try {
                    if (rank == n - 1) {
                        allReduce.broadcast(new byte[1], 0);
                    } else {
                        allReduce.barrier();
                    }
                    return null;
                } catch (SwitchMLException e) {
                    return e;
                }
            });
            assertThat(errors).allSatisfy(e -> assertThat(e).isInstanceOf(MismatchedOperationException.class)
                    .hasMessageContaining("barrier #1").hasMessageContaining("broadcast #1 from rank 0"));
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
