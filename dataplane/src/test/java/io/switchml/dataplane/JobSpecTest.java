package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** What a job spec and a worker endpoint accept, and the messages they reject with. */
class JobSpecTest {
    private static final InetAddress HOST = TestJobs.address(1, 1);
    private static final List<WorkerEndpoint> ONE_WORKER = List.of(WorkerEndpoint.of(HOST, 5000));

    @Test
    void derivedCounts() {
        JobSpec spec = TestJobs.job(7, 3, PayloadSize.B256, 16, 2);

        assertThat(spec.workers()).isEqualTo(3);
        assertThat(spec.slots()).isEqualTo(32);
    }

    @Test
    void rejectsEachInvalidField() {
        assertRejected(() -> new JobSpec(-1, "j", PayloadSize.B128, 1, 1, ONE_WORKER), "job number -1");
        assertRejected(() -> new JobSpec(256, "j", PayloadSize.B128, 1, 1, ONE_WORKER), "job number 256");
        assertRejected(() -> new JobSpec(1, null, PayloadSize.B128, 1, 1, ONE_WORKER), "name");
        assertRejected(() -> new JobSpec(1, "j", null, 1, 1, ONE_WORKER), "payload size");
        assertRejected(() -> new JobSpec(1, "j", PayloadSize.B128, 0, 1, ONE_WORKER), "slots per thread 0");
        assertRejected(() -> new JobSpec(1, "j", PayloadSize.B128, 1, 0, ONE_WORKER), "threads 0");
        assertRejected(() -> new JobSpec(1, "j", PayloadSize.B128, ProtocolConstants.MAX_SLOTS, 2, twoThreads()),
                "exceed the 16384 slots");
        assertRejected(() -> new JobSpec(1, "j", PayloadSize.B128, 1, 1, null), "no workers");
        assertRejected(() -> new JobSpec(1, "j", PayloadSize.B128, 1, 1, List.of()), "no workers");
        assertRejected(() -> new JobSpec(1, "j", PayloadSize.B128, 1, 1, Collections.singletonList(null)), "worker 0");
        assertRejected(() -> new JobSpec(1, "j", PayloadSize.B128, 1, 1, twoThreads()), "needs one port per thread");
        assertRejected(() -> new JobSpec(1, "j", PayloadSize.B128, 1, 1,
                List.of(WorkerEndpoint.of(HOST, 5000), WorkerEndpoint.of(HOST, 5000))), "appears twice");
    }

    @Test
    void acceptsTheLargestJob() {
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        for (int rank = 0; rank < ProtocolConstants.MAX_WORKERS; rank++) {
            endpoints.add(WorkerEndpoint.of(TestJobs.address(1, rank), 5000));
        }
        JobSpec spec = new JobSpec(255, "big", PayloadSize.B128, ProtocolConstants.MAX_SLOTS, 1, endpoints);
        assertThat(spec.workers()).isEqualTo(256);

        endpoints.add(WorkerEndpoint.of(TestJobs.address(2, 0), 5000));
        assertRejected(() -> new JobSpec(1, "j", PayloadSize.B128, 1, 1, endpoints), "257 workers");
    }

    @Test
    void endpointsAreCopied() {
        List<WorkerEndpoint> endpoints = new ArrayList<>(ONE_WORKER);
        JobSpec spec = new JobSpec(1, "j", PayloadSize.B128, 1, 1, endpoints);
        endpoints.add(WorkerEndpoint.of(HOST, 6000));

        assertThat(spec.workers()).isEqualTo(1);
    }

    @Test
    void workerEndpointRejectsWhatTheWorkerTableCannotHold() throws Exception {
        assertRejected(() -> new WorkerEndpoint(null, new int[] {1}), "address is null");
        InetAddress ipv6 = InetAddress.getByName("::2");
        assertRejected(() -> WorkerEndpoint.of(ipv6, 1), "not IPv4");
        assertRejected(() -> new WorkerEndpoint(HOST, null), "no ports");
        assertRejected(() -> WorkerEndpoint.of(HOST), "no ports");
        assertRejected(() -> WorkerEndpoint.of(HOST, 0), "port 0");
        assertRejected(() -> WorkerEndpoint.of(HOST, 65536), "port 65536");
    }

    /** A leaf switch, a spine's worker, sends thread t's slots from its switch port t % P (docs/ARCHITECTURE.md section 9). */
    @Test
    void threadsOfOneWorkerMayShareAPort() {
        WorkerEndpoint leaf = WorkerEndpoint.of(HOST, 7, 7, 8);
        assertThat(new JobSpec(1, "j", PayloadSize.B128, 1, 3, List.of(leaf)).endpoints()).containsExactly(leaf);
    }

    @Test
    void workerEndpointIsAnImmutableValue() {
        int[] ports = {5000, 5001};
        WorkerEndpoint endpoint = new WorkerEndpoint(HOST, ports);
        ports[0] = 1;
        endpoint.ports()[1] = 2;

        assertThat(endpoint.ports()).containsExactly(5000, 5001);
        assertThat(endpoint).isEqualTo(WorkerEndpoint.of(HOST, 5000, 5001)).hasSameHashCodeAs(WorkerEndpoint.of(HOST, 5000, 5001));
        assertThat(endpoint).isNotEqualTo(WorkerEndpoint.of(HOST, 5001, 5000));
        assertThat(endpoint.toString()).isEqualTo("10.1.1.1[5000, 5001]");
    }

    private static List<WorkerEndpoint> twoThreads() {
        return List.of(WorkerEndpoint.of(HOST, 5000, 5001));
    }

    private static void assertRejected(ThrowingCallable call, String message) {
        assertThatThrownBy(call).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }
}
