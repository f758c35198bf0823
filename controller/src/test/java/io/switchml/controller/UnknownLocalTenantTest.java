package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status.Code;
import io.switchml.protocol.ProtocolConstants;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Security round 5 (docs/security.md, "Local users are tenants"): a local caller whose socket the kernel's table
 * does not show is the tenant "unknown local", one for all such callers whatever loopback address they use, with
 * an eighth of a tenant's share.
 */
class UnknownLocalTenantTest extends ControllerTestSupport {
    @BeforeEach
    void hideTheTable() {
        // Before the tests' channel connects (lazily, at its first call): its connection's lookup finds nothing.
        LocalUsers.tables = List.of(Path.of("/nonexistent/tcp"));
    }

    @AfterEach
    void showTheTable() {
        LocalUsers.tables = LocalUsers.KERNEL_TABLES;
    }

    @Test
    void unknownLocalCallersShareTheSmallestShare() throws Exception {
        int share = (int) (ProtocolConstants.MAX_JOBS * ControllerSecurity.DEFAULT_TENANT_SHARE
                / JobFormation.UNKNOWN_LOCAL_PARTS);
        for (int i = 0; i < share; i++) {
            formJob("unknown-" + i, 1, 40_000 + 10 * i);
        }
        assertStatus(failure(joinAsync(joinRequest("one-too-many", 0, 1))), Code.RESOURCE_EXHAUSTED,
                "tenant unknown local already runs " + share + " jobs");
        assertThat(service.registry().tenantHoldings()).containsOnlyKeys(Caller.UNKNOWN_LOCAL);
        assertThat(service.registry().tenantHoldings().get(Caller.UNKNOWN_LOCAL)[0]).isEqualTo(share);
        // The metrics say who holds what.
        try (SwitchMetrics metrics = SwitchMetrics.start(service, new MetricsOptions(LOOPBACK, 0))) {
            String text = MetricsScrape.scrape(metrics.port());
            assertThat(MetricsScrape.value(text, "switchml_tenant_jobs{tenant=\"unknown local\"}")).isEqualTo(share);
            assertThat(MetricsScrape.value(text, "switchml_tenant_slots{tenant=\"unknown local\"}")).isPositive();
            assertThat(MetricsScrape.value(text, "switchml_tenant_register_bytes{tenant=\"unknown local\"}"))
                    .isPositive();
        }
    }
}
