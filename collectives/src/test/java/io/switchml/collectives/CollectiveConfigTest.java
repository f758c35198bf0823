package io.switchml.collectives;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CollectiveConfigTest {
    private static final String FOUR = "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003";

    @Test
    void buildsFromNamesAndEndpointStrings() {
        CollectiveConfig c = CollectiveConfig.builder().algorithm("PS").endpoints(FOUR).servers("127.0.0.1:8000,127.0.0.1:8001")
                .rank(3).build();
        assertThat(c.algorithm()).isEqualTo(Algorithm.PARAMETER_SERVER);
        assertThat(c.workers()).isEqualTo(4);
        assertThat(c.serverCount()).isEqualTo(2);
        assertThat(c.serversInWorkers()).isTrue();
        assertThat(c.segmentBytes()).isEqualTo(256 << 10);
        assertThat(Endpoints.format(c.endpoints())).isEqualTo(FOUR);
        ParameterServerConfig server = c.parameterServer(1);
        assertThat(server.endpoint()).isEqualTo(new InetSocketAddress("127.0.0.1", 8001));
        assertThat(server.workers()).isEqualTo(4);
        assertThat(c.toBuilder().rank(0).build().rank()).isZero();
        assertThat(CollectiveConfig.builder().endpoints(FOUR).rank(0).build().serverCount()).as("ring").isZero();
    }

    @Test
    void rejectsBadValuesByName() {
        assertThatThrownBy(() -> CollectiveConfig.builder().algorithm("nccl"))
                .hasMessageContaining("unknown collective algorithm 'nccl'").hasMessageContaining("ring, ps");
        assertThatThrownBy(() -> CollectiveConfig.builder().endpoints(FOUR).build()).hasMessageContaining("rank is required");
        assertThatThrownBy(() -> CollectiveConfig.builder().endpoints(FOUR).rank(4).build()).hasMessageContaining("rank = 4 outside 0..3");
        assertThatThrownBy(() -> CollectiveConfig.builder().endpoints(FOUR).workers(5).rank(0).build())
                .hasMessageContaining("endpoints lists 4 addresses but workers = 5");
        assertThatThrownBy(() -> CollectiveConfig.builder().endpoints("127.0.0.1:7000,127.0.0.1:7000").rank(0).build())
                .hasMessageContaining("listed twice");
        assertThatThrownBy(() -> CollectiveConfig.builder().algorithm("ps").endpoints(FOUR).rank(0).build())
                .hasMessageContaining("ps needs at least one server endpoint");
        assertThatThrownBy(() -> CollectiveConfig.builder().algorithm("ps").endpoints("127.0.0.1:7000").rank(0)
                .servers("127.0.0.1:8000,127.0.0.1:8001").build()).hasMessageContaining("at most one per worker");
        assertThatThrownBy(() -> CollectiveConfig.builder().algorithm("ps").endpoints(FOUR).rank(0)
                .servers("127.0.0.1:7001").serversInWorkers(false).build()).hasMessageContaining("also a worker endpoint");
        assertThatThrownBy(() -> CollectiveConfig.builder().endpoints(FOUR).rank(0).segmentBytes(1001).build())
                .hasMessageContaining("segmentBytes = 1001");
        assertThatThrownBy(() -> CollectiveConfig.builder().endpoints(FOUR).rank(0).operationTimeout(Duration.ZERO).build())
                .hasMessageContaining("operationTimeout must be positive");
        assertThatThrownBy(() -> Endpoints.parse("localhost")).hasMessageContaining("not host:port");
        assertThatThrownBy(() -> Endpoints.parse("localhost:http")).hasMessageContaining("no numeric port");
        assertThatThrownBy(() -> Endpoints.parse("localhost:70000")).hasMessageContaining("outside 1..65535");
    }

    @Test
    void factoryRefusesListenersThatDoNotFit() {
        List<Listener> listeners = LocalJob.bindAll(2);
        CollectiveConfig ring = CollectiveConfig.builder().endpoints(LocalJob.addresses(listeners)).rank(0).build();
        assertThatThrownBy(() -> Collectives.open(ring, null, listeners.get(1))).hasMessageContaining("the ring has no servers");
        listeners.get(0).close();
    }

    @Test
    void partitionsCutEvenlyAndFindTheirParts() {
        for (int parts = 1; parts <= 9; parts++) {
            for (int length : new int[]{0, 1, 7, 8, 9, 100, 1001}) {
                Partition p = Partition.of(length, parts);
                int next = 0;
                for (int c = 0; c < parts; c++) {
                    assertThat(p.start(c)).isEqualTo(next);
                    assertThat(p.size(c)).isBetween(length / parts, length / parts + 1);
                    for (int i = next; i < next + p.size(c); i++) {
                        assertThat(p.partOf(i)).isEqualTo(c);
                    }
                    next += p.size(c);
                }
                assertThat(next).isEqualTo(length);
            }
        }
    }
}
