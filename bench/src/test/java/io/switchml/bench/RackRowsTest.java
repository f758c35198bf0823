package io.switchml.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A row measured in the emulated rack says its line rate and topology, in every format. */
class RackRowsTest {
    @Test
    void rowsInTheRackCarryTheRate() {
        BenchRow row = new BenchRow("ring", 2, 1024, "float32", 1, 1, 1, 1, 0, true);
        assertThat(BenchFormat.JSON.line(row)).endsWith(", \"rate_bps\": null, \"line_rate_fraction\": null, \"wire_bytes\": null, \"wire_ratio\": null, \"topology\": null, \"kernels\": null, \"worker_syscalls\": null, \"switch_syscalls\": null, \"cpu_s\": null, \"datagrams_out\": null, \"packets_per_datagram_out\": null, \"datagrams_in\": null, \"packets_per_datagram_in\": null}");
        assertThat(BenchFormat.JSON.line(row.withRate(500_000_000L))).contains(", \"rate_bps\": 500000000, ");
        assertThat(BenchFormat.JSON.line(row.withRate(500_000_000L).withTopology("1-host")))
                .contains(", \"topology\": \"1-host\", \"kernels\": null, ");
        assertThat(BenchFormat.TABLE.line(row.withTopology("fabric"))).endsWith(" fabric               -       -                     -");
    }
}
