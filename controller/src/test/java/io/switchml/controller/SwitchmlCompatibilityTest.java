package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.BlockQuantizer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Workers that speak only SwitchML's protocols (switchml.proto and SwitchML's packets) all-reduce
 * through this controller and switch, with exact results.
 */
class SwitchmlCompatibilityTest extends ControllerTestSupport {
    /** Fixed-point scale for float32: |x| < 1, so n * 2^24 stays far from overflow. */
    private static final double FLOAT_SCALE = Math.scalb(1.0, 24);
    private final Random random = new Random(20210412);

    @Test
    void twoWorkersAllReduceInt32AndFloat32() throws Exception {
        List<SwitchmlTestWorker> workers = session(1, 2);
        assertIntAllReduce(workers, 3_001);
        assertFloatAllReduce(workers, 65_537);
        assertIntAllReduce(workers, 1_000_003);
    }

    @Test
    void fourWorkersAllReduceInt32AndFloat32() throws Exception {
        List<SwitchmlTestWorker> workers = session(2, 4);
        assertIntAllReduce(workers, 4_099);
        assertFloatAllReduce(workers, 250_001);
        assertIntAllReduce(workers, 100_000);
    }

    @Test
    void barrierAndBroadcastReachEveryWorker() throws Exception {
        List<SwitchmlTestWorker> workers = session(3, 4);
        onEveryWorker(workers, w -> {
            w.barrier();
            return null;
        });
        List<Long> values = onEveryWorker(workers, w -> w.broadcast(1000 + workers.indexOf(w), 2));
        assertThat(values).containsOnly(1002L);
    }

    @Test
    void aNewRunOfASessionReplacesTheOldOne() throws Exception {
        for (SwitchmlTestWorker w : session(4, 2)) {
            w.close();
        }
        List<SwitchmlTestWorker> again = session(4, 2);
        assertIntAllReduce(again, 200);
    }

    /** Every rank of a new session: sockets on one port at distinct loopback addresses, UdpSession in parallel. */
    private List<SwitchmlTestWorker> session(long sessionId, int n) throws Exception {
        List<SwitchmlTestWorker> workers = new ArrayList<>();
        for (DatagramSocket socket : socketsOnOnePort(n)) {
            workers.add(new SwitchmlTestWorker(workers.size(), n, socket, channel));
        }
        int switchPort = service.dataplane().ports()[0];
        onEveryWorker(workers, w -> {
            w.join(sessionId, switchPort);
            return null;
        });
        return workers;
    }

    /**
     * SwitchML's workers all send a slot from the same port (the switch answers at the port the last
     * packet came from), so each test worker has its own address in 127/8 and all share one port.
     */
    private List<DatagramSocket> socketsOnOnePort(int n) throws IOException {
        for (int attempt = 0; ; attempt++) {
            int base = 127 << 24 | (1 + random.nextInt(250)) << 16 | random.nextInt(256) << 8;
            List<DatagramSocket> sockets = new ArrayList<>();
            try {
                int port = 0;
                for (int rank = 0; rank < n; rank++) {
                    DatagramSocket socket = new DatagramSocket(null);
                    sockets.add(socket);
                    socket.bind(new InetSocketAddress(SwitchmlSessions.ipv4(base | rank + 1), port));
                    port = socket.getLocalPort();
                }
                return sockets;
            } catch (BindException e) {
                sockets.forEach(DatagramSocket::close);
                if (attempt == 5) {
                    throw e;
                }
            }
        }
    }

    private void assertIntAllReduce(List<SwitchmlTestWorker> workers, int length) throws Exception {
        List<int[]> inputs = new ArrayList<>();
        int[] expected = new int[length];
        for (int r = 0; r < workers.size(); r++) {
            int[] data = random.ints(length, -(1 << 28), 1 << 28).toArray();
            inputs.add(data);
            for (int i = 0; i < length; i++) {
                expected[i] += data[i];
            }
        }
        List<int[]> results = onEveryWorker(workers, w -> allReduce(w, inputs.get(workers.indexOf(w))));
        for (int[] result : results) {
            assertThat(result).isEqualTo(expected);
        }
    }

    /** float32 as SwitchML sends it without exponents: fixed point with one scale, summed exactly as int32. */
    private void assertFloatAllReduce(List<SwitchmlTestWorker> workers, int length) throws Exception {
        List<int[]> quantized = new ArrayList<>();
        int[] expectedSum = new int[length];
        for (int r = 0; r < workers.size(); r++) {
            int[] q = new int[length];
            for (int i = 0; i < length; i++) {
                q[i] = BlockQuantizer.quantize(random.nextFloat() * 2 - 1, FLOAT_SCALE);
                expectedSum[i] += q[i];
            }
            quantized.add(q);
        }
        List<int[]> sums = onEveryWorker(workers, w -> allReduce(w, quantized.get(workers.indexOf(w))));
        float[] expected = dequantize(expectedSum);
        for (int[] sum : sums) {
            assertThat(dequantize(sum)).isEqualTo(expected);
        }
    }

    private static float[] dequantize(int[] sum) {
        float[] values = new float[sum.length];
        for (int i = 0; i < sum.length; i++) {
            values[i] = BlockQuantizer.dequantize(sum[i], FLOAT_SCALE);
        }
        return values;
    }

    private static int[] allReduce(SwitchmlTestWorker worker, int[] data) {
        try {
            return worker.allReduce(data);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs {@code call} on every worker at once (each is one SwitchML worker thread); results in rank order. */
    private <T> List<T> onEveryWorker(List<SwitchmlTestWorker> workers, Function<SwitchmlTestWorker, T> call)
            throws Exception {
        List<CompletableFuture<T>> futures = new ArrayList<>();
        for (SwitchmlTestWorker w : workers) {
            futures.add(async(() -> call.apply(w)));
        }
        List<T> results = new ArrayList<>();
        for (CompletableFuture<T> f : futures) {
            results.add(f.get(2, TimeUnit.MINUTES));
        }
        return results;
    }
}
