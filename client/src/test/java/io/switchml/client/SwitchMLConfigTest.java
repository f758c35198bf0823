package io.switchml.client;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.switchml.control.ControllerAddress;
import io.switchml.control.ControllerCredentials;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SwitchMLConfigTest {
    @Test
    void defaultsAreDocumentedValues() {
        SwitchMLConfig c = SwitchMLConfig.builder().rank(0).workers(1).build();
        assertThat(c.controller()).isEqualTo("localhost:50099");
        assertThat(c.job()).isEqualTo("default");
        assertThat(c.elementsPerPacket()).isEqualTo(SwitchMLConfig.AUTO);
        assertThat(c.slotsPerThread()).isEqualTo(SwitchMLConfig.AUTO);
        assertThat(c.threads()).isEqualTo(1);
        assertThat(c.lossRecovery().retransmitMin()).isEqualTo(Duration.ofMillis(10));
        assertThat(c.operationTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(c.localAddress()).isEmpty();
        assertThat(c.congestion().mode()).isEqualTo(SwitchMLConfig.CongestionControl.AUTO);
        assertThat(c.congestion().initialWindow()).isEqualTo(8);
        assertThat(c.congestion().targetDelay()).isEqualTo(Duration.ofMillis(2));
        for (SwitchMLConfig.Key k : SwitchMLConfig.Key.values()) {
            assertThat(k.property()).startsWith("switchml.");
            assertThat(k.description()).isNotBlank();
        }
    }

    @Test
    void theInitialRetransmissionTimeoutsDefaultFollowsTheFloorWhileAValueGivenIsChecked() {
        SwitchMLConfig raised = SwitchMLConfig.builder().workers(1).rank(0).retransmitMin(Duration.ofMillis(50)).build();
        assertThat(raised.lossRecovery().retransmitInitial()).isEqualTo(Duration.ofMillis(50));
        SwitchMLConfig kept = SwitchMLConfig.builder().workers(1).rank(0).retransmitMin(Duration.ofMillis(5)).build();
        assertThat(kept.lossRecovery().retransmitInitial()).isEqualTo(Duration.ofMillis(20));
        assertThatThrownBy(() -> SwitchMLConfig.builder().workers(1).rank(0).retransmitMin(Duration.ofMillis(50))
                .retransmitInitial(Duration.ofMillis(30)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("switchml.retransmitInitialMs = 30");
    }

    @Test
    void oneRoundElementsDefaultsTo4096AndRefusesNegativeValues() {
        assertThat(SwitchMLConfig.builder().workers(1).rank(0).build().oneRoundElements()).isEqualTo(4096);
        assertThat(SwitchMLConfig.builder().workers(1).rank(0).oneRoundElements(0).build().oneRoundElements()).isZero();
        assertThatThrownBy(() -> SwitchMLConfig.builder().workers(1).rank(0).oneRoundElements(-1).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("switchml.oneRoundElements");
    }

    @Test
    void zeroBlockSkippingIsOnByDefaultAndTakesOnOrOff() {
        assertThat(SwitchMLConfig.builder().workers(1).rank(0).build().skipZeroBlocks()).isTrue();
        assertThat(SwitchMLConfig.builder().workers(1).rank(0).skipZeroBlocks(false).build().skipZeroBlocks()).isFalse();
        assertThat(SwitchMLConfig.builder().workers(1).rank(0).set(SwitchMLConfig.Key.SKIP_ZERO_BLOCKS, "OFF").build()
                .skipZeroBlocks()).isFalse();
        assertThatThrownBy(() -> SwitchMLConfig.builder().workers(1).rank(0).set(SwitchMLConfig.Key.SKIP_ZERO_BLOCKS, "maybe")
                .build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("switchml.skipZeroBlocks must be on or off, not 'maybe'");
    }

    @Test
    void fileThenSystemPropertiesThenBuilder(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("switchml.properties");
        Files.writeString(file, "switchml.rank=1\nswitchml.workers=4\nswitchml.threads=2\nswitchml.slotsPerThread=8\n");
        String saved = System.getProperty("switchml.threads");
        System.setProperty("switchml.threads", "3");
        try {
            SwitchMLConfig c = SwitchMLConfig.builder().file(file).systemProperties().slotsPerThread(16).build();
            assertThat(c.rank()).isEqualTo(1);
            assertThat(c.workers()).isEqualTo(4);
            assertThat(c.threads()).as("system property beats file").isEqualTo(3);
            assertThat(c.slotsPerThread()).as("builder beats file").isEqualTo(16);
            assertThat(c.toMap()).containsEntry("switchml.threads", "3").containsEntry("switchml.rank", "1");
            assertThat(c.toBuilder().rank(2).build().rank()).isEqualTo(2);
        } finally {
            if (saved == null) {
                System.clearProperty("switchml.threads");
            } else {
                System.setProperty("switchml.threads", saved);
            }
        }
    }

    @Test
    void badValuesNameTheSetting() {
        assertThatThrownBy(() -> SwitchMLConfig.builder().workers(2).build())
                .hasMessageContaining("switchml.rank is required");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(2).workers(2).build())
                .hasMessageContaining("switchml.rank = 2 outside 0..1");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).elementsPerPacket(100).build())
                .hasMessageContaining("elements per packet must be one of");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).threads(17).build())
                .hasMessageContaining("switchml.threads = 17");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).threads(16).slotsPerThread(2048).build())
                .hasMessageContaining("exceeds the 16384 slots");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).controller("nohost").build())
                .hasMessageContaining("host:port");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1)
                .set(SwitchMLConfig.Key.CONGESTION_CONTROL, "yes").build())
                .hasMessageContaining("switchml.congestionControl must be on, off or auto, not 'yes'");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).congestionInitialWindow(0).build())
                .hasMessageContaining("switchml.congestionInitialWindow = 0 outside");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1)
                .set(SwitchMLConfig.Key.CONGESTION_TARGET_DELAY_MICROS, 0).build())
                .hasMessageContaining("switchml.congestionTargetDelayMicros = 0 outside");
        Properties p = new Properties();
        p.setProperty("switchml.windowSize", "3");
        assertThatThrownBy(() -> SwitchMLConfig.builder().properties(p))
                .hasMessageContaining("unknown worker setting 'switchml.windowSize'");
        p.clear();
        p.setProperty("switchml.workers", "four");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).properties(p).build())
                .hasMessageContaining("switchml.workers must be an integer, not 'four'");
        assertThatThrownBy(() -> SwitchMLConfig.builder().file(Path.of("/nonexistent/switchml.properties")))
                .hasMessageContaining("cannot read configuration file");
    }

    @Test
    void theJobNameIsCheckedBeforeConnectingByTheControllersRule() {
        // The same rule as the controller's (JobNames), so a worker learns of a bad name before it dials anything.
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).job("train\u202Egnp").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("switchml.job has the unprintable character U+202E at index 5");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).job("x".repeat(201)).build())
                .hasMessage("switchml.job must have 1..200 characters");
        assertThat(SwitchMLConfig.builder().rank(0).workers(1).job("résumé 训练 🚀").build().job()).isEqualTo("résumé 训练 🚀");
    }

    @Test
    void theEnvironmentGivesRankWorkersJobAndAnySettingAsLaunchersSetThem() {
        // torchrun's conventions, and one SWITCHML_* setting; SWITCHML_JAVA is a launcher's own, left alone.
        SwitchMLConfig torchrun = SwitchMLConfig.builder().environment(Map.of("RANK", "2", "WORLD_SIZE", "4",
                "TORCHELASTIC_RUN_ID", "run-42", "SWITCHML_CONTROLLER", "switch1:50099", "SWITCHML_JAVA", "/usr/bin/java",
                "SWITCHML_JOIN_TIMEOUT_MS", "90000")).build();
        assertThat(torchrun.rank()).isEqualTo(2);
        assertThat(torchrun.workers()).isEqualTo(4);
        assertThat(torchrun.job()).as("the Python package's rule").isEqualTo("torch-run-42");
        assertThat(torchrun.controller().toString()).isEqualTo("switch1:50099");
        assertThat(torchrun.joinTimeout()).isEqualTo(Duration.ofSeconds(90));

        // srun's, when RANK is not set; a SWITCHML_* variable wins over a launcher's.
        SwitchMLConfig srun = SwitchMLConfig.builder().environment(Map.of("SLURM_PROCID", "1", "SLURM_NTASKS", "3",
                "SWITCHML_JOB", "mine", "TORCHELASTIC_RUN_ID", "theirs")).build();
        assertThat(srun.rank()).isEqualTo(1);
        assertThat(srun.workers()).isEqualTo(3);
        assertThat(srun.job()).isEqualTo("mine");

        // The builder's setters (a command's options) win over the environment.
        assertThat(SwitchMLConfig.builder().environment(Map.of("RANK", "2", "WORLD_SIZE", "4")).rank(0).build().rank())
                .isZero();
        assertThatThrownBy(() -> SwitchMLConfig.builder().environment(Map.of("WORLD_SIZE", "4")).build())
                .hasMessageContaining("switchml.rank is required").hasMessageContaining("RANK");
    }

    @Test
    void aKubernetesIndexedJobsPodTakesItsRankFromItsCompletionIndex() {
        // deploy/kubernetes/ranks-job.yaml: Kubernetes sets JOB_COMPLETION_INDEX, the manifest WORLD_SIZE and the job.
        SwitchMLConfig pod = SwitchMLConfig.builder().environment(Map.of("JOB_COMPLETION_INDEX", "3", "WORLD_SIZE", "4",
                "SWITCHML_JOB", "indexed", "SWITCHML_CONTROLLERS", "switch-0:50099,switch-1:50099")).build();
        assertThat(pod.rank()).isEqualTo(3);
        assertThat(pod.workers()).isEqualTo(4);
        assertThat(pod.job()).isEqualTo("indexed");
        assertThat(LauncherEnvironment.of(Map.of("JOB_COMPLETION_INDEX", "3")).sources())
                .containsEntry(SwitchMLConfig.Key.RANK, "JOB_COMPLETION_INDEX");
        // A launcher's own rank wins (a PyTorchJob's pods may run in an indexed Job), and SWITCHML_RANK over both.
        assertThat(SwitchMLConfig.builder().environment(Map.of("JOB_COMPLETION_INDEX", "3", "RANK", "1",
                "WORLD_SIZE", "4")).build().rank()).isEqualTo(1);
        assertThat(SwitchMLConfig.builder().environment(Map.of("JOB_COMPLETION_INDEX", "3", "SWITCHML_RANK", "2",
                "WORLD_SIZE", "4")).build().rank()).isEqualTo(2);
        assertThatThrownBy(() -> SwitchMLConfig.builder().environment(Map.of("JOB_COMPLETION_INDEX", "4",
                "WORLD_SIZE", "4")).build())
                .hasMessageContaining("switchml.rank = 4 outside 0..3")
                .hasMessageEndingWith("(switchml.rank from environment variable JOB_COMPLETION_INDEX)");
    }

    @Test
    void everyRankOfOneLaunchDerivesTheSameJobName() {
        // torchrun with a static rendezvous has no run id ("none"): the master's address names the job.
        assertThat(jobFrom(Map.of("TORCHELASTIC_RUN_ID", "none", "MASTER_ADDR", "10.0.0.1", "MASTER_PORT", "29500")))
                .isEqualTo("torch-10.0.0.1:29500");
        assertThat(jobFrom(Map.of("MASTER_ADDR", "h", "MASTER_PORT", "1", "TORCHELASTIC_RESTART_COUNT", "2")))
                .as("an elastic restart is a new job").isEqualTo("torch-h:1-restart2");
        assertThat(jobFrom(Map.of("SLURM_JOB_ID", "4711", "SLURM_STEP_ID", "0"))).isEqualTo("slurm-4711.0");
        assertThat(jobFrom(Map.of("MASTER_ADDR", "h"))).as("no port: no rule applies").isEqualTo("default");
    }

    @Test
    void theJobNameRuleIsThePythonPackagesCaseForCase() throws Exception {
        // The cases python/tests/test_backend.py runs against switchml_torch.backend.launcher_job.
        JsonArray cases;
        try (Reader json = new InputStreamReader(SwitchMLConfigTest.class.getResourceAsStream("/launcher-job-names.json"),
                StandardCharsets.UTF_8)) {
            cases = JsonParser.parseReader(json).getAsJsonObject().getAsJsonArray("cases");
        }
        assertThat(cases).hasSizeGreaterThan(5);
        for (JsonElement element : cases) {
            JsonObject c = element.getAsJsonObject();
            Map<String, String> env = new HashMap<>();
            c.getAsJsonObject("env").entrySet().forEach(e -> env.put(e.getKey(), e.getValue().getAsString()));
            String expected = c.get("job").isJsonNull() ? null : c.get("job").getAsString();
            assertThat(LauncherEnvironment.of(env).settings().get(SwitchMLConfig.Key.JOB)).as("%s", env).isEqualTo(expected);
        }
    }

    private static String jobFrom(Map<String, String> env) {
        return SwitchMLConfig.builder().rank(0).workers(1).environment(env).build().job();
    }

    @Test
    void aBadValueNamesWhereItCameFrom(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> SwitchMLConfig.builder().environment(Map.of("RANK", "4", "WORLD_SIZE", "4")).build())
                .hasMessage("switchml.rank = 4 outside 0..3 (this worker's rank, 0..workers-1 (required; or the environment's"
                        + " SWITCHML_RANK, RANK, SLURM_PROCID or JOB_COMPLETION_INDEX)) (switchml.rank from environment variable RANK)");
        Path file = dir.resolve("worker.properties");
        Files.writeString(file, "switchml.slotsPerThread=0\n");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).file(file).build())
                .hasMessageContaining("switchml.slotsPerThread = 0: give a positive number or auto")
                .hasMessageEndingWith("(switchml.slotsPerThread from file " + file + ")");
        // One setting's source is not another's: switchml.controller is a prefix of switchml.controllers.
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1)
                .environment(Map.of("SWITCHML_CONTROLLER", "a:1", "SWITCHML_CONTROLLERS", " , ")).build())
                .hasMessage("switchml.controllers = ',' lists no host:port (switchml.controllers from environment variable"
                        + " SWITCHML_CONTROLLERS)");
        // What the program set is its own: no source.
        assertThatThrownBy(() -> SwitchMLConfig.builder().environment(Map.of("SWITCHML_THREADS", "0")).rank(0).workers(1)
                .threads(2).slotsPerThread(0).build()).hasMessageNotContaining(" from ");
    }

    @Test
    void aSettingIsNamedWithOrWithoutThePrefixAndUnknownNamesAreRefused() {
        assertThat(SwitchMLConfig.Key.named("slotsPerThread")).isEqualTo(SwitchMLConfig.Key.SLOTS_PER_THREAD);
        assertThat(SwitchMLConfig.Key.named("switchml.slotsPerThread")).isEqualTo(SwitchMLConfig.Key.SLOTS_PER_THREAD);
        assertThat(SwitchMLConfig.Key.properties(Map.of("threads", "2"))).containsEntry("switchml.threads", "2");
        assertThatThrownBy(() -> SwitchMLConfig.Key.named("slots")).hasMessageStartingWith("unknown worker setting 'slots';"
                + " known (with or without the switchml. prefix): controller, controllers");
        assertThat(SwitchMLConfig.Key.SLOTS_PER_THREAD.environmentVariable()).isEqualTo("SWITCHML_SLOTS_PER_THREAD");
        SwitchMLConfig fromMap = SwitchMLConfig.builder().settings(Map.of("threads", "2", "switchml.rank", "0", "workers", "1"))
                .build();
        assertThat(fromMap.threads()).isEqualTo(2);
        assertThat(fromMap.workers()).isEqualTo(1);
        assertThatThrownBy(() -> SwitchMLConfig.builder().settings(Map.of("windowSize", "3")))
                .hasMessageStartingWith("unknown worker setting 'windowSize'");
    }

    @Test
    void theLaunchersHomePropertyIsNoWorkerSetting() {
        String saved = System.getProperty(SwitchMLConfig.LAUNCHER_HOME_PROPERTY);
        System.setProperty(SwitchMLConfig.LAUNCHER_HOME_PROPERTY, "/opt/switchml");
        try {
            SwitchMLConfig c = SwitchMLConfig.builder().systemProperties().rank(0).workers(1).build();
            assertThat(c.toMap()).doesNotContainKey(SwitchMLConfig.LAUNCHER_HOME_PROPERTY);
        } finally {
            if (saved == null) {
                System.clearProperty(SwitchMLConfig.LAUNCHER_HOME_PROPERTY);
            } else {
                System.setProperty(SwitchMLConfig.LAUNCHER_HOME_PROPERTY, saved);
            }
        }
    }

    @Test
    void controllerAddresses() {
        assertThat(ControllerAddress.parse("switch-1:50099")).isEqualTo(new ControllerAddress("switch-1", 50099));
        assertThat(ControllerAddress.parse("[::1]:7")).isEqualTo(new ControllerAddress("::1", 7));
        assertThat(new ControllerAddress("::1", 7)).hasToString("[::1]:7");
        assertThatThrownBy(() -> ControllerAddress.parse("host:http")).hasMessageContaining("not a number");
        assertThatThrownBy(() -> ControllerAddress.parse("host:70000")).hasMessageContaining("outside 1..65535");
    }

    @Test
    void theJobSecretComesFromItsFileAndIsNeverPrinted(@TempDir Path dir)
            throws Exception {
        Path file = dir.resolve("job.secret");
        Files.writeString(file, "file-secret-0123456789\n");
        SwitchMLConfig fromFile = SwitchMLConfig.builder().rank(0).workers(1).jobSecretFile(file).build();
        assertThat(fromFile.jobSecret()).isEqualTo("file-secret-0123456789");
        SwitchMLConfig inline = SwitchMLConfig.builder().rank(0).workers(1).jobSecret("inline-secret-0123456789").build();
        assertThat(inline.jobSecret()).isEqualTo("inline-secret-0123456789");
        assertThat(inline.toString()).doesNotContain("inline-secret").contains("jobSecret=(set)");
        assertThat(inline.credentials().toString()).doesNotContain("inline-secret");
        assertThat(SwitchMLConfig.builder().rank(0).workers(1).build().jobSecret()).isEmpty();

        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1)
                .jobSecretFile(dir.resolve("missing")).build()).hasMessageContaining("switchml.jobSecretFile");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1)
                .set(SwitchMLConfig.Key.TLS_CERT, "client.pem").build()).hasMessageContaining("go together");
    }

    @Test
    void theSharedMemorySpinIsASettingLikeAnyOther() {
        assertThat(SwitchMLConfig.builder().rank(0).workers(1).build().ipcSpinNanos())
                .as("auto: the host's default").isEqualTo(io.switchml.ipc.IpcPoller.defaultSpinNanos());
        assertThat(SwitchMLConfig.builder().environment(Map.of("SWITCHML_RANK", "0", "SWITCHML_WORKERS", "1",
                "SWITCHML_IPC_SPIN_MICROS", "20")).build().ipcSpinNanos()).isEqualTo(20_000);
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).set(SwitchMLConfig.Key.IPC_SPIN_MICROS, -1)
                .build()).hasMessageContaining("switchml.ipcSpinMicros");
    }
}
