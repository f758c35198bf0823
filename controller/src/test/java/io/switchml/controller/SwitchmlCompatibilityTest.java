package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.BlockQuantizer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import io.switchml.dataplane.JobSpec;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Workers that speak only SwitchML's protocols (switchml.proto and SwitchML's packets) set their
 * sessions up in SwitchML's order and all-reduce through this controller and switch, with exact
 * results; new runs from the same hosts replace the old ones.
 */
class SwitchmlCompatibilityTest extends ControllerTestSupport {
    /** Fixed-point scale for float32: |x| < 1, so n * 2^24 stays far from overflow. */
    private static final double FLOAT_SCALE = Math.scalb(1.0, 24);
    private final Random random = new Random(20210412);

    @ParameterizedTest(name = "{0} workers, {1} elements per packet")
    @CsvSource({"1, 64", "2, 64", "4, 64", "1, 256", "2, 256", "4, 256"})
    void workersSetUpInSwitchmlsOrderAndAllReduceExactly(int n, int elements) throws Exception {
        PayloadSize size = PayloadSize.ofElements(elements);
        List<SwitchmlTestWorker> workers = workers(freshAddresses(n), size);
        long sessionId = setUp(workers, null, rootAlone -> {
            // Only rank 0 has registered: a session of several ranks is not on the switch yet.
            assertThat(service.sessions().jobNumber(rootAlone).isPresent()).isEqualTo(n == 1);
        });

        int number = service.sessions().jobNumber(sessionId).orElseThrow();
        assertThat(service.dataplane().job(number)).hasValueSatisfying(job -> {
            assertThat(job.endpoints()).hasSize(n);
            assertThat(job.size()).isEqualTo(size);
        });
        assertIntAllReduce(workers, 3 * SwitchmlTestWorker.WINDOW * elements + 1);
        assertFloatAllReduce(workers, 65_537);
        assertIntAllReduce(workers, 250_001);
    }

    @Test
    void barrierAndBroadcastReachEveryWorker() throws Exception {
        List<SwitchmlTestWorker> workers = workers(freshAddresses(4), PayloadSize.B256);
        setUp(workers, 3L, id -> { });
        onEveryWorker(workers, w -> {
            w.barrier();
            return null;
        });
        List<Long> values = onEveryWorker(workers, w -> w.broadcast(1000 + workers.indexOf(w), 2));
        assertThat(values).containsOnly(1002L);
    }

    @Test
    void twoRunsBackToBackFromTheSameHostsEachGetTheSwitch() throws Exception {
        List<InetAddress> hosts = freshAddresses(2);
        List<SwitchmlTestWorker> first = workers(hosts, PayloadSize.B256);
        long firstId = setUp(first, null, id -> { });
        assertIntAllReduce(first, 10_000);
        first.forEach(SwitchmlTestWorker::close); // the run ends; SwitchML's workers never leave the session

        List<SwitchmlTestWorker> second = workers(hosts, PayloadSize.B256);
        long secondId = setUp(second, null, id -> { });

        assertThat(secondId).isNotEqualTo(firstId);
        assertThat(service.sessions().jobNumber(firstId)).isEmpty();
        assertThat(service.sessions().replacedSessions()).isEqualTo(1);
        assertThat(sessionJobsOnTheSwitch()).hasSize(1);
        assertIntAllReduce(second, 10_000);
    }

    @Test
    void aRestartedRunWithTheSameSessionIdStartsItAfresh() throws Exception {
        List<InetAddress> hosts = freshAddresses(2);
        List<SwitchmlTestWorker> first = workers(hosts, PayloadSize.B256);
        setUp(first, 77L, id -> { });
        assertIntAllReduce(first, 5_000);
        first.forEach(SwitchmlTestWorker::close);

        List<SwitchmlTestWorker> again = workers(hosts, PayloadSize.B256);
        setUp(again, 77L, id -> assertThat(service.sessions().jobNumber(77)).as("reset by rank 0").isEmpty());

        assertThat(service.sessions().restartedSessions()).isEqualTo(1);
        assertIntAllReduce(again, 5_000);
    }

    @Test
    void aNewRunReplacesAnOldOneWithPacketsInFlightWhichAreDroppedAndCounted() throws Exception {
        List<InetAddress> hosts = freshAddresses(2);
        List<SwitchmlTestWorker> old = workers(hosts, PayloadSize.B256);
        setUp(old, null, id -> { });
        assertIntAllReduce(old, 3_000);
        // The old run stops mid all-reduce: rank 0's first window sits half aggregated in the switch.
        int[] stale = random.ints(SwitchmlTestWorker.WINDOW * 64, -1000, 1000).toArray();
        long contributionsBefore = contributions();
        int inFlight = old.get(0).sendFirstWindow(stale);
        awaitCounter("contributions", contributionsBefore + inFlight);
        long dropsBefore = service.dataplane().counters().get("drops_unknown_source");

        List<SwitchmlTestWorker> fresh = workers(hosts, PayloadSize.B256);
        long freshId = setUp(fresh, null, id -> {
            // Rank 0's registration removed the old session; the new one is not active until all have
            // registered, so the old run's packets that still arrive are refused, not aggregated.
            try {
                old.get(0).sendFirstWindow(stale);
                awaitCounter("drops_unknown_source", dropsBefore + inFlight);
            } catch (IOException | InterruptedException e) {
                throw new AssertionError(e);
            }
        });

        assertThat(service.sessions().replacedSessions()).isEqualTo(1);
        assertThat(service.sessions().jobNumber(freshId)).isPresent();
        assertIntAllReduce(fresh, 3 * SwitchmlTestWorker.WINDOW * 64);
        old.forEach(SwitchmlTestWorker::close);
    }

    /**
     * Sets a session up in SwitchML's order with every worker on its own thread, rank 0 proposing
     * {@code rootSessionId} (null: its clock). The other ranks are held back until rank 0's UdpSession
     * has returned and {@code whileRootAlone} (given the session id) has run; they then register
     * after rank 0, as SwitchML's do. Returns the session id every rank learned.
     */
    private long setUp(List<SwitchmlTestWorker> workers, Long rootSessionId, Consumer<Long> whileRootAlone)
            throws Exception {
        int switchPort = service.dataplane().ports()[0];
        SwitchmlTestWorker.SetupGates gates = new SwitchmlTestWorker.SetupGates();
        List<CompletableFuture<Long>> ranks = new ArrayList<>();
        for (SwitchmlTestWorker w : workers) {
            ranks.add(async(() -> {
                try {
                    return w.setUpSession(rootSessionId, gates, switchPort);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        try {
            if (!gates.rootRegistered.await(30, TimeUnit.SECONDS)) {
                throw new AssertionError("rank 0's UdpSession did not return within 30 s while the other ranks"
                        + " had not registered (SwitchML's controller answers it at once)");
            }
            whileRootAlone.accept(gates.sessionId);
        } finally {
            gates.othersMayGo.countDown();
        }
        List<Long> ids = new ArrayList<>();
        for (CompletableFuture<Long> rank : ranks) {
            ids.add(rank.get(1, TimeUnit.MINUTES));
        }
        assertThat(ids).containsOnly(gates.sessionId);
        return gates.sessionId;
    }

    private long contributions() {
        return service.dataplane().counters().get("contributions");
    }

    private List<String> sessionJobsOnTheSwitch() {
        List<String> names = new ArrayList<>();
        for (int n = 0; n < ProtocolConstants.MAX_JOBS; n++) {
            service.dataplane().job(n).map(JobSpec::name).filter(name -> name.startsWith("switchml-session-"))
                    .ifPresent(names::add);
        }
        return names;
    }

    /** One test worker per address, all bound to one port. */
    private List<SwitchmlTestWorker> workers(List<InetAddress> hosts, PayloadSize size) throws IOException {
        List<SwitchmlTestWorker> workers = new ArrayList<>();
        for (DatagramSocket socket : socketsOnOnePort(hosts)) {
            workers.add(new SwitchmlTestWorker(workers.size(), hosts.size(), size, socket, channel));
        }
        return workers;
    }

    /**
     * SwitchML's workers all send a slot from the same port (the switch answers at the port the last
     * packet came from), so each test worker has its own address in 127/8 and all share one port.
     */
    private List<InetAddress> freshAddresses(int n) {
        int base = 127 << 24 | (1 + random.nextInt(250)) << 16 | random.nextInt(256) << 8;
        List<InetAddress> hosts = new ArrayList<>();
        for (int rank = 0; rank < n; rank++) {
            hosts.add(SwitchmlSessions.ipv4(base | rank + 1));
        }
        return hosts;
    }

    private static List<DatagramSocket> socketsOnOnePort(List<InetAddress> hosts) throws IOException {
        for (int attempt = 0; ; attempt++) {
            List<DatagramSocket> sockets = new ArrayList<>();
            try {
                int port = 0;
                for (InetAddress host : hosts) {
                    DatagramSocket socket = new DatagramSocket(null);
                    sockets.add(socket);
                    socket.bind(new InetSocketAddress(host, port));
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
