package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.switchml.protocol.PayloadSize;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Installing and removing jobs: the worker table and the register arrays. */
class ControlPlaneTest {
    private static final PayloadSize SIZE = PayloadSize.B128;

    private final SwitchHarness harness = new SwitchHarness();

    @Test
    void installedJobIsVisibleByNumber() {
        JobSpec spec = harness.install(TestJobs.job(5, 2, SIZE, 4, 1));

        assertThat(harness.controlPlane.job(5)).contains(spec);
        assertThat(harness.controlPlane.job(6)).isEmpty();
        assertThat(harness.controlPlane.job(-1)).isEmpty();
        assertThat(harness.controlPlane.job(256)).isEmpty();
        assertThat(harness.controlPlane.tables().workers().size()).isEqualTo(2);
    }

    @Test
    void jobNumberInUseIsRejected() {
        harness.install(TestJobs.job(5, 2, SIZE, 4, 1));
        JobSpec sameNumber = new JobSpec(5, "another", SIZE, 4, 1,
                List.of(WorkerEndpoint.of(TestJobs.address(50, 0), 1234)));

        assertThatThrownBy(() -> harness.controlPlane.installJob(sameNumber))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("job number 5 is already in use");
        assertThat(harness.controlPlane.job(5).orElseThrow().name()).isEqualTo("job-5");
    }

    @Test
    void aLeafSwitchsPortsServeSeveralJobsTellingThemApartByJobNumber() {
        WorkerEndpoint leaf = WorkerEndpoint.leafSwitch(TestJobs.address(90, 0), 48864, 48864);
        JobSpec a = harness.install(new JobSpec(5, "a", SIZE, 4, 2, List.of(leaf, WorkerEndpoint.of(TestJobs.address(5, 1), 1, 2)),
                false));
        JobSpec b = harness.install(new JobSpec(6, "b", SIZE, 4, 2, List.of(WorkerEndpoint.of(TestJobs.address(6, 0), 1, 2), leaf),
                false));
        assertThat(harness.controlPlane.tables().workers().size()).as("the leaf's one source, and two each").isEqualTo(5);
        // The leaf is rank 0 of job 5 and rank 1 of job 6, from the same port: each job sums its own.
        assertThat(harness.contribute(a, 0, 0, 0, 0, 0, 1)).isEqualTo(NextStep.CONSUME);
        assertThat(harness.contribute(b, 1, 0, 0, 0, 0, 10)).isEqualTo(NextStep.CONSUME);
        assertThat(harness.contribute(a, 1, 0, 0, 0, 0, 2)).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.contribute(b, 0, 0, 0, 0, 0, 20)).isEqualTo(NextStep.MULTICAST);
        // The leaf's source with a header naming a job it is not in is another job's packet: dropped.
        JobSpec c = harness.install(TestJobs.job(7, 1, SIZE, 4, 1));
        JobSpec leafInC = new JobSpec(7, "c-as-seen-by-the-leaf", SIZE, 4, 2, List.of(leaf), false);
        assertThat(harness.contribute(leafInC, 0, 0, 0, 0, 0, 1)).isEqualTo(NextStep.DROP);
        assertThat(harness.counters.get(DropReason.JOB_MISMATCH)).isEqualTo(1);
        // One job ends: the other still has the leaf's source.
        harness.controlPlane.removeJob(5);
        harness.contribute(b, 1, 1, 0, 0, 0, 10);
        assertThat(harness.contribute(b, 0, 1, 0, 0, 0, 20)).isEqualTo(NextStep.MULTICAST);
        harness.controlPlane.removeJob(6);
        assertThat(harness.controlPlane.tables().workers().size()).as("c's worker only").isEqualTo(c.workers());
        // A leaf's source is no ordinary worker's, and the reverse.
        assertThatThrownBy(() -> harness.controlPlane.installJob(new JobSpec(8, "clash", SIZE, 4, 1,
                List.of(WorkerEndpoint.leafSwitch(TestJobs.address(7, 0), TestJobs.FIRST_WORKER_PORT)))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("already belongs to job 7");
    }

    @Test
    void endpointOfAnotherJobIsRejectedAndNothingChanges() {
        JobSpec first = harness.install(TestJobs.job(5, 2, SIZE, 4, 1));
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        endpoints.add(WorkerEndpoint.of(TestJobs.address(6, 0), 1000));
        endpoints.add(first.endpoints().get(1)); // 10.5.1.1:40000, taken by job 5
        JobSpec clash = new JobSpec(6, "clash", SIZE, 4, 1, endpoints);

        assertThatThrownBy(() -> harness.controlPlane.installJob(clash))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("10.5.1.1:40000")
                .hasMessageContaining("already belongs to job 5");
        assertThat(harness.controlPlane.job(6)).isEmpty();
        assertThat(harness.controlPlane.tables().workers().size()).isEqualTo(2);
        // The first job still aggregates.
        harness.contribute(first, 0, 0, 0, 0, 0, 1);
        assertThat(harness.contribute(first, 1, 0, 0, 0, 0, 2)).isEqualTo(NextStep.MULTICAST);
    }

    @Test
    void anEndpointSharingOnlyTheAddressIsAccepted() {
        JobSpec first = harness.install(TestJobs.job(5, 1, SIZE, 4, 1));
        JobSpec neighbour = new JobSpec(6, "neighbour", SIZE, 4, 1,
                List.of(WorkerEndpoint.of(first.endpoints().get(0).address(), 40001)));

        harness.controlPlane.installJob(neighbour);

        assertThat(harness.controlPlane.job(6)).contains(neighbour);
    }

    @Test
    void removingAJobFreesItsEndpointsForAnotherJob() {
        JobSpec old = harness.install(TestJobs.job(5, 2, SIZE, 4, 1));
        harness.contribute(old, 0, 0, 0, 0, 0, 1);

        harness.controlPlane.removeJob(5);

        assertThat(harness.controlPlane.job(5)).isEmpty();
        assertThat(harness.controlPlane.tables().workers().size()).isZero();
        assertThat(harness.contribute(old, 1, 0, 0, 0, 0, 1)).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.UNKNOWN_SOURCE)).isEqualTo(1);

        JobSpec reused = new JobSpec(9, "reused", SIZE, 4, 1, old.endpoints(), false);
        harness.controlPlane.installJob(reused);
        harness.contribute(reused, 1, 0, 0, 0, 0, 10);
        assertThat(harness.contribute(reused, 0, 0, 0, 0, 0, 20)).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.sink.drain()).allSatisfy(r -> {
            assertThat(r.packet().jobNumber()).isEqualTo(9);
            assertThat(r.elements()[0]).isEqualTo(30);
        });
    }

    @Test
    void reinstallingAJobNumberStartsWithFreshRegisters() {
        JobSpec spec = harness.install(TestJobs.job(5, 2, SIZE, 4, 1));
        harness.contribute(spec, 0, 0, 0, 0, 0, 1000);
        harness.controlPlane.removeJob(5);
        harness.controlPlane.installJob(spec);

        // Rank 0's earlier contribution is gone: its packet is new, not a retransmission.
        assertThat(harness.contribute(spec, 0, 0, 0, 0, 0, 1)).isEqualTo(NextStep.CONSUME);
        assertThat(harness.contribute(spec, 1, 0, 0, 0, 0, 2)).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.sink.drain()).allSatisfy(r -> assertThat(r.elements()[0]).isEqualTo(3));
    }

    @Test
    void removingAnUnknownJobIsANoOp() {
        JobSpec spec = harness.install(TestJobs.job(5, 2, SIZE, 4, 1));

        harness.controlPlane.removeJob(6);
        harness.controlPlane.removeJob(-1);
        harness.controlPlane.removeJob(1000);

        assertThat(harness.controlPlane.job(5)).contains(spec);
    }

    @Test
    void nullSpecIsRejected() {
        assertThatThrownBy(() -> harness.controlPlane.installJob(null)).isInstanceOf(IllegalArgumentException.class);
    }
}
