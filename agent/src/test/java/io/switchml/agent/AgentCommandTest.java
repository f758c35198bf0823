package io.switchml.agent;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AgentCommandTest {
    private static final String[] REQUIRED = {"--rank", "1", "--workers", "3", "--socket", "/tmp/s", "--shm=/dev/shm/m"};

    private static String[] with(String... more) {
        String[] all = new String[REQUIRED.length + more.length];
        System.arraycopy(REQUIRED, 0, all, 0, REQUIRED.length);
        System.arraycopy(more, 0, all, REQUIRED.length, more.length);
        return all;
    }

    @Test
    void optionsTheirDefaultsAndRepeatedSettings() {
        AgentOptions o = AgentCommand.parse(with("--algo", "ring", "--set", "threads=2", "--set", "switchml.localAddress=10.0.0.1",
                "--operation-timeout", "PT5S"));
        assertThat(o.algorithm()).isEqualTo("ring");
        assertThat(o.rank()).isEqualTo(1);
        assertThat(o.workers()).isEqualTo(3);
        assertThat(o.socket()).isEqualTo(Path.of("/tmp/s"));
        assertThat(o.sharedMemory()).isEqualTo(Path.of("/dev/shm/m"));
        assertThat(o.sharedMemoryBytes()).isEqualTo(268435456L);
        assertThat(o.settings()).isEqualTo(Map.of("switchml.threads", "2", "switchml.localAddress", "10.0.0.1"));
        assertThat(o.operationTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.connectTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(o.idleTimeout()).isEqualTo(Duration.ofMinutes(30));
        assertThat(o.local()).as("one rank alone by default").isEqualTo(AgentOptions.LocalRanks.alone(1, 3));
        assertThat(AgentCommand.parse(new String[]{"--rank", "0", "--help"})).isNull();
    }

    @Test
    void aHostsRanksAndTheLaunchsSize() {
        AgentOptions o = AgentCommand.parse(with("--algo", "ring", "--local-ranks", "4,5,6", "--ranks", "8"));
        assertThat(o.local().ranks()).containsExactly(4, 5, 6);
        assertThat(o.local().launchRanks()).isEqualTo(8);
        assertThatThrownBy(() -> AgentCommand.parse(with("--algo", "ring", "--local-ranks", "4,4", "--ranks", "8")))
                .hasMessage("local ranks [4, 4] are not distinct ranks in 0..7");
        assertThatThrownBy(() -> AgentCommand.parse(with("--algo", "ring", "--local-ranks", "1", "--ranks", "2")))
                .hasMessage("the launch's 2 ranks cannot make a job of 3 workers");
    }

    @Test
    void aBadCommandLineSaysWhatIsWrong() {
        assertThatThrownBy(() -> AgentCommand.parse(new String[]{"--rank", "0"})).hasMessage("missing --workers N");
        assertThatThrownBy(() -> AgentCommand.parse(with("--bogus", "1"))).hasMessage("unknown option '--bogus'");
        assertThatThrownBy(() -> AgentCommand.parse(with("--shm-bytes"))).hasMessage("--shm-bytes needs a value (BYTES)");
        assertThatThrownBy(() -> AgentCommand.parse(with("--rank", "2"))).hasMessage("--rank is given twice");
        assertThatThrownBy(() -> AgentCommand.parse(with("--set", "threads"))).hasMessage("--set takes NAME=VALUE, not 'threads'");
        assertThatThrownBy(() -> AgentCommand.parse(with("--idle-timeout", "5s")))
                .hasMessageContaining("--idle-timeout takes an ISO-8601 duration");
        assertThatThrownBy(() -> AgentCommand.parse(with("--algo", "ring", "--shm-bytes", "x")))
                .hasMessage("--shm-bytes takes a whole number, not 'x'");
        assertThatThrownBy(() -> AgentCommand.parse(with())).hasMessageContaining("switchml needs the controller");
    }
}
