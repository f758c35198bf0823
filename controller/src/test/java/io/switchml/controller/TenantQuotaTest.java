package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status.Code;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.dataplane.JobSpec;
import io.switchml.protocol.PayloadSize;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One source address cannot take the whole register memory: its running jobs share a quota in bytes. */
class TenantQuotaTest extends ControllerTestSupport {
    /** Two ranks, one thread of 32 slots of 64 elements. */
    private static final JobParameters JOB = params(2).toBuilder().setSlotsPerThread(32).build();
    private static final long SLOT = JobSpec.slotBytes(PayloadSize.ofElements(JOB.getElementsPerPacket()), 2);
    private static final int SLOTS_PER_JOB = JOB.getSlotsPerThread();

    @Override
    ControllerSecurity security() {
        // Room for one job and a half of the tests' default size from one address.
        return new ControllerSecurity().tenantQuotaBytes(SLOT * SLOTS_PER_JOB * 3 / 2);
    }

    @Test
    void aTenantsSecondJobGetsWhatItsQuotaLeavesAndItsThirdIsRefused() {
        int first = joinAll(List.of(joinRequest("first", 0, JOB, 40_000).build(),
                joinRequest("first", 1, JOB, 40_000).build())).get(0).getJobNumber();
        assertThat(service.dataplane().job(first).orElseThrow().slots()).isEqualTo(SLOTS_PER_JOB);

        List<JoinResponse> second = joinAll(List.of(joinRequest("second", 0, JOB, 41_000).build(),
                joinRequest("second", 1, JOB, 41_000).build()));
        assertThat(second.get(0).getAdmission()).contains("its tenant " + selfTenant() + " may hold only");
        assertThat(service.dataplane().job(second.get(0).getJobNumber()).orElseThrow().slots())
                .isLessThan(SLOTS_PER_JOB);

        assertStatus(failure(joinAsync(joinRequest("third", 0, 1))), Code.RESOURCE_EXHAUSTED, "--tenant-quota-bytes");

        // The quota comes back when a job ends.
        stub().leave(leave(first, 0));
        stub().leave(leave(first, 1));
        assertThat(formJob("third", 1, 42_000)).isGreaterThanOrEqualTo(0);
    }
}
