package io.switchml.launch;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.client.SwitchMLConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JobSecretTest {
    private static final String SECRET = SwitchMLConfig.Key.JOB_SECRET.property();
    private static final String SECRET_FILE = SwitchMLConfig.Key.JOB_SECRET_FILE.property();

    @Test
    void everyJobGetsAFreshSecretThatTheSwitchTakes() {
        String one = JobSecret.fresh();
        assertThat(one).hasSize(43).matches("[A-Za-z0-9_-]+").isNotEqualTo(JobSecret.fresh());
        // The worker's own parser takes it as a secret (printable, long enough, never printed).
        SwitchMLConfig config = SwitchMLConfig.builder().settings(Map.of(SECRET, one, "switchml.rank", "0", "switchml.workers", "1"))
                .build();
        assertThat(config.jobSecret()).isEqualTo(one);
        assertThat(config.toString()).doesNotContain(one);
    }

    @Test
    void theWorkersGetTheSecretInTheirEnvironmentUnlessTheSettingsNameOne() {
        assertThat(JobSecret.forWorkers(Map.of())).containsOnlyKeys("SWITCHML_JOB_SECRET");
        assertThat(JobSecret.forWorkers(Map.of(SECRET, "the-users-own-secret-0123"))).isEmpty();
        assertThat(JobSecret.forWorkers(Map.of(SECRET_FILE, "/run/secrets/job"))).isEmpty();
    }

    @Test
    void aWorkerTakesTheLaunchersSecretOnlyWhereItsSettingsNameNone() {
        Map<String, String> launcher = Map.of("SWITCHML_JOB_SECRET", "from-the-launcher-0123456789");
        assertThat(JobSecret.withLauncherSecret(Map.of("switchml.rank", "1"), launcher))
                .containsEntry(SECRET, "from-the-launcher-0123456789").containsEntry("switchml.rank", "1");
        assertThat(JobSecret.withLauncherSecret(Map.of(SECRET_FILE, "/run/secrets/job"), launcher))
                .doesNotContainKey(SECRET);
        assertThat(JobSecret.withLauncherSecret(Map.of(SECRET, "the-users-own-secret-0123"), launcher))
                .containsEntry(SECRET, "the-users-own-secret-0123");
        assertThat(JobSecret.withLauncherSecret(Map.of(), Map.of())).as("a worker started by hand").isEmpty();
    }
}
