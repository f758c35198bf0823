package io.switchml.agent;

import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.PeerEndpoints;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The agent's side of joining: its endpoints on the HELLO line, every rank's on the JOIN line, and its settings. */
class JobJoinTest {
    @Test
    void endpointsSurviveTheHelloAndJoinLines() {
        PeerEndpoints.Endpoint mine = new PeerEndpoints.Endpoint(1, new InetSocketAddress("127.0.0.1", 41000),
                new InetSocketAddress("127.0.0.1", 41001));
        assertThat(JobJoin.endpoints(mine)).isEqualTo("127.0.0.1:41000/127.0.0.1:41001");
        PeerEndpoints v6 = JobJoin.peers("[::1]:7000", 1, false);
        assertThat(v6.workers()).containsExactly(new InetSocketAddress("::1", 7000));
        assertThat(JobJoin.endpoints(new PeerEndpoints.Endpoint(0, v6.workers().get(0), null))).isEqualTo("[0:0:0:0:0:0:0:1]:7000");

        PeerEndpoints ps = JobJoin.peers("127.0.0.1:1/127.0.0.1:2, 127.0.0.1:3/127.0.0.1:4", 2, true);
        assertThat(ps.workers()).containsExactly(new InetSocketAddress("127.0.0.1", 1), new InetSocketAddress("127.0.0.1", 3));
        assertThat(ps.servers()).containsExactly(new InetSocketAddress("127.0.0.1", 2), new InetSocketAddress("127.0.0.1", 4));
        assertThat(JobJoin.peers("127.0.0.1:1,127.0.0.1:3", 2, false).servers()).isEmpty();

        assertThatThrownBy(() -> JobJoin.peers("127.0.0.1:1", 2, false)).hasMessageContaining("the endpoints of 2 ranks, got 1");
        assertThatThrownBy(() -> JobJoin.peers("127.0.0.1:1,127.0.0.1:3", 2, true))
                .hasMessageContaining("WORKER/SERVER endpoints for every rank");
        assertThatThrownBy(() -> JobJoin.peers("nowhere", 1, false)).hasMessageContaining("endpoint 'nowhere' is not host:port");
        assertThatThrownBy(() -> JobJoin.peers("127.0.0.1:port", 1, false)).hasMessageContaining("has no numeric port");
    }

    @Test
    void theOperationTimeoutAppliesUnlessTheSettingsNameOne() {
        AllReduceAlgorithm ring = AllReduceAlgorithm.named("ring");
        AgentOptions plain = options("ring", Map.of("localAddress", "127.0.0.2"));
        assertThat(JobJoin.settings(plain, ring)).containsEntry("switchml.operationTimeoutMs", "7000")
                .containsEntry("switchml.rank", "1").containsEntry("switchml.workers", "2")
                .containsEntry("switchml.localAddress", "127.0.0.2");
        AgentOptions named = options("ring", Map.of("operationTimeoutMs", "9000"));
        assertThat(JobJoin.settings(named, ring)).containsEntry("switchml.operationTimeoutMs", "9000");
        AgentOptions switchMl = new AgentOptions("switchml", 1, 2, "127.0.0.1:5000", "job-a", Path.of("s"), Path.of("m"),
                64, Map.of(), Duration.ofSeconds(1), Duration.ofSeconds(7), Duration.ofSeconds(60));
        assertThat(JobJoin.settings(switchMl, AllReduceAlgorithm.switchMl())).containsEntry("switchml.job", "job-a")
                .containsEntry("switchml.controller", "127.0.0.1:5000");
    }

    @Test
    void anUnregisteredAlgorithmIsRefusedWithTheRegisteredNames() {
        assertThatThrownBy(() -> options("allgather", Map.of()))
                .hasMessageContaining("unknown all-reduce algorithm 'allgather'; known: switchml, ring, ps, topk, qsgd");
        assertThatThrownBy(() -> new AgentOptions("switchml", 0, 1, null, null, Path.of("s"), Path.of("m"), 64, Map.of(),
                Duration.ofSeconds(1), Duration.ofSeconds(7), Duration.ofSeconds(60)))
                .hasMessageContaining("switchml needs the controller's HOST:PORT and the job's name");
    }

    private static AgentOptions options(String algorithm, Map<String, String> settings) {
        return new AgentOptions(algorithm, 1, 2, null, null, Path.of("s"), Path.of("m"), 64, settings,
                Duration.ofSeconds(1), Duration.ofSeconds(7), Duration.ofSeconds(60));
    }
}
