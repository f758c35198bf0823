package io.switchml.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.switchml.cli.SwitchMlCommand;
import io.switchml.cli.SwitchServerCommand;
import io.switchml.client.SwitchMLConfig;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.protocol.ProtocolConstants;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Every manifest of deploy/kubernetes, read strictly into fabric8's typed Kubernetes model, checked against the
 * switch and the workers themselves: ports against the switch's defaults ({@link ProtocolConstants}), the probes
 * against the controller's gRPC health service, the switch's arguments parsed by its own command line, the ranks'
 * environment by {@link SwitchMLConfig} (which reads JOB_COMPLETION_INDEX as the rank), files against the
 * Secrets mounted. docs/operating.md, "On Kubernetes".
 */
class ManifestsTest {
    /** Variables of the launchers and of PyTorch that the manifests may set besides the workers' settings. */
    private static final Set<String> LAUNCHER_VARIABLES = Set.of("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
            "PATH", "PYTHONPATH");

    private static final Map<Path, List<HasMetadata>> OBJECTS = new LinkedHashMap<>();

    @BeforeAll
    static void readEveryManifest() throws IOException {
        try (Stream<Path> files = Files.walk(Manifests.DIR)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                if (file.getFileName().toString().equals("kustomization.yaml")) {
                    continue;
                }
                List<HasMetadata> objects = new ArrayList<>();
                for (JsonNode document : Manifests.documents(file)) {
                    objects.add(Manifests.object(document, Manifests.DIR.relativize(file).toString()));
                }
                OBJECTS.put(file, objects);
            }
        }
    }

    @Test
    void everyManifestIsReadStrictlyAndEveryKustomizationListsItsFiles() throws IOException {
        assertThat(OBJECTS).as("deploy/kubernetes's manifests").hasSizeGreaterThanOrEqualTo(6);
        OBJECTS.forEach((file, objects) -> assertThat(objects).as("%s", file).isNotEmpty());
        try (Stream<Path> files = Files.walk(Manifests.DIR)) {
            for (Path kustomization : files.filter(f -> f.getFileName().toString().equals("kustomization.yaml")).toList()) {
                JsonNode k = Manifests.documents(kustomization).get(0);
                assertThat(k.path("apiVersion").asString()).startsWith("kustomize.config.k8s.io/");
                assertThat(Set.of("Kustomization", "Component")).contains(k.path("kind").asString());
                Set<String> fieldsKnown = Set.of("apiVersion", "kind", "labels", "resources", "images", "patches",
                        "components", "namespace");
                k.propertyNames().forEach(f -> assertThat(fieldsKnown).as("%s: field %s", kustomization, f)
                        .contains(f));
                Set<String> listed = new TreeSet<>();
                k.path("resources").forEach(r -> listed.add(r.asString()));
                k.path("patches").forEach(p -> listed.add(p.path("path").asString()));
                Set<String> present;
                try (Stream<Path> siblings = Files.list(kustomization.getParent())) {
                    present = siblings.map(p -> p.getFileName().toString())
                            .filter(n -> !n.equals("kustomization.yaml")).collect(Collectors.toCollection(TreeSet::new));
                }
                assertThat(listed).as("%s lists exactly the files beside it", kustomization).isEqualTo(present);
            }
        }
    }

    @Test
    void aFieldKubernetesDoesNotHaveIsAnError() throws IOException {
        JsonNode statefulSet = Manifests.documents(Manifests.DIR.resolve("switch/statefulset.yaml")).get(0);
        ObjectNode misspelt = (ObjectNode) statefulSet.deepCopy();
        ((ObjectNode) misspelt.at("/spec/template/spec/containers/0/readinessProbe/grpc")).put("prot", 50099);
        assertThatThrownBy(() -> Manifests.object(misspelt, "misspelt"))
                .hasMessageContaining("misspelt.spec.template.spec.containers[0].readinessProbe.grpc.prot");
    }

    @Test
    void theSwitchListensWhereItsServiceProbesNetworkPolicyAndScrapeAnnotationsSay() {
        StatefulSet sts = one(StatefulSet.class);
        PodSpec pod = sts.getSpec().getTemplate().getSpec();
        Container container = pod.getContainers().get(0);
        // The switch's own command line reads the arguments; the ports are its defaults.
        ParseResult switchArgs = switchCommandLine(container.getArgs());
        int controllerPort = switchArgs.matchedOptionValue("--controller-port", ProtocolConstants.CONTROLLER_TCP_PORT);
        int dataplanePort = switchArgs.matchedOptionValue("--port", ProtocolConstants.SWITCH_UDP_PORT);
        assertThat(controllerPort).isEqualTo(ProtocolConstants.CONTROLLER_TCP_PORT).isEqualTo(50099);
        assertThat(dataplanePort).isEqualTo(ProtocolConstants.SWITCH_UDP_PORT).isEqualTo(48864);
        assertThat(switchArgs.matchedOptionValue("--ports", 1)).as("one dataplane port").isEqualTo(1);
        int metricsPort = switchArgs.matchedOptionValue("--metrics-port", -1);
        assertThat(metricsPort).as("--metrics-port").isPositive();
        assertThat(switchArgs.matchedOptionValue("--metrics-bind", "127.0.0.1")).isEqualTo("0.0.0.0");
        assertThat(switchArgs.matchedOptionValue("--bind", "0.0.0.0")).isEqualTo("0.0.0.0");
        assertThat(switchArgs.matchedOptionValue("--controller-bind", "0.0.0.0")).isEqualTo("0.0.0.0");

        Map<String, ContainerPort> ports = container.getPorts().stream()
                .collect(Collectors.toMap(ContainerPort::getName, p -> p));
        assertThat(ports.get("grpc").getContainerPort()).isEqualTo(controllerPort);
        assertThat(ports.get("grpc").getProtocol()).isEqualTo("TCP");
        assertThat(ports.get("dataplane").getContainerPort()).isEqualTo(dataplanePort);
        assertThat(ports.get("dataplane").getProtocol()).isEqualTo("UDP");
        assertThat(ports.get("metrics").getContainerPort()).isEqualTo(metricsPort);

        // Native gRPC probes of the controller port's health service: the empty name (the server) and the controller.
        for (Probe probe : List.of(container.getStartupProbe(), container.getLivenessProbe())) {
            assertThat(probe.getGrpc().getPort()).isEqualTo(controllerPort);
            assertThat(probe.getGrpc().getService()).isNullOrEmpty();
        }
        assertThat(container.getReadinessProbe().getGrpc().getPort()).isEqualTo(controllerPort);
        assertThat(container.getReadinessProbe().getGrpc().getService()).isEqualTo(ControllerGrpc.SERVICE_NAME);

        Map<String, String> annotations = sts.getSpec().getTemplate().getMetadata().getAnnotations();
        assertThat(annotations).containsEntry("prometheus.io/scrape", "true")
                .containsEntry("prometheus.io/port", String.valueOf(metricsPort))
                .containsEntry("prometheus.io/path", "/metrics");

        // Active and standby, each with a name of its own behind a headless Service of the same ports.
        assertThat(sts.getSpec().getReplicas()).isEqualTo(2);
        Service service = one(Service.class);
        assertThat(sts.getSpec().getServiceName()).isEqualTo(service.getMetadata().getName());
        assertThat(service.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(sts.getSpec().getTemplate().getMetadata().getLabels())
                .containsAllEntriesOf(service.getSpec().getSelector())
                .containsAllEntriesOf(sts.getSpec().getSelector().getMatchLabels());
        for (ServicePort port : service.getSpec().getPorts()) {
            ContainerPort target = ports.get(port.getTargetPort().getStrVal());
            assertThat(target).as("service port %s", port.getName()).isNotNull();
            assertThat(port.getPort()).isEqualTo(target.getContainerPort());
            assertThat(port.getProtocol()).isEqualTo(target.getProtocol());
        }

        PodDisruptionBudget pdb = one(PodDisruptionBudget.class);
        assertThat(sts.getSpec().getTemplate().getMetadata().getLabels())
                .containsAllEntriesOf(pdb.getSpec().getSelector().getMatchLabels());
        assertThat(pdb.getSpec().getMaxUnavailable().getIntVal()).as("one of the two at a time").isEqualTo(1);

        NetworkPolicy policy = one(NetworkPolicy.class);
        assertThat(sts.getSpec().getTemplate().getMetadata().getLabels())
                .containsAllEntriesOf(policy.getSpec().getPodSelector().getMatchLabels());
        Set<String> admitted = new TreeSet<>();
        policy.getSpec().getIngress().forEach(rule -> {
            assertThat(rule.getFrom()).as("every rule names the namespace it admits").isNotEmpty()
                    .allSatisfy(peer -> assertThat(peer.getNamespaceSelector().getMatchLabels())
                            .containsKey("kubernetes.io/metadata.name"));
            for (NetworkPolicyPort port : rule.getPorts()) {
                admitted.add(port.getPort().getIntVal() + "/" + port.getProtocol());
            }
        });
        assertThat(admitted).containsExactlyInAnyOrder(controllerPort + "/TCP", dataplanePort + "/UDP",
                metricsPort + "/TCP");

        // Non-root on a read-only root file system, with a writable /tmp; resources set.
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(mountedVolume(pod, container, "/tmp").getEmptyDir()).isNotNull();
        assertThat(container.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(container.getResources().getLimits()).containsKey("memory");
        // The operator token comes from a Secret.
        String tokenFile = switchArgs.matchedOptionValue("--operator-token-file", (Path) null).toString();
        assertThat(mountedVolume(pod, container, tokenFile).getSecret()).as(tokenFile).isNotNull();
    }

    @Test
    void theTlsComponentPatchesTheSwitchIntoAValidStatefulSetWithItsFilesFromASecret() throws IOException {
        JsonNode base = Manifests.documents(Manifests.DIR.resolve("switch/statefulset.yaml")).get(0);
        JsonNode patch = Manifests.mapper().readTree(Files.readString(Manifests.DIR.resolve("tls/statefulset-tls.json")));
        StatefulSet sts = (StatefulSet) Manifests.object(Manifests.patch(base, patch), "tls-patched statefulset");
        PodSpec pod = sts.getSpec().getTemplate().getSpec();
        Container container = pod.getContainers().get(0);
        ParseResult args = switchCommandLine(container.getArgs());
        for (String option : List.of("--tls-cert", "--tls-key")) {
            String file = args.matchedOptionValue(option, (Path) null).toString();
            assertThat(mountedVolume(pod, container, file).getSecret().getSecretName()).isEqualTo("switchml-switch-tls");
        }
        assertThat(container.getReadinessProbe().getTcpSocket().getPort().getIntVal())
                .isEqualTo(ProtocolConstants.CONTROLLER_TCP_PORT);
    }

    @Test
    void anIndexedJobsPodsAreTheRanksOfOneJobAtTheActiveSwitchThenItsStandby() {
        Job job = one(Job.class);
        StatefulSet sts = one(StatefulSet.class);
        assertThat(job.getSpec().getCompletionMode()).isEqualTo("Indexed");
        int completions = job.getSpec().getCompletions();
        assertThat(job.getSpec().getParallelism()).as("every rank at once").isEqualTo(completions);
        PodSpec pod = job.getSpec().getTemplate().getSpec();
        Container container = pod.getContainers().get(0);
        new CommandLine(new SwitchMlCommand()).parseArgs(container.getArgs().toArray(String[]::new));
        assertEnvironmentNames(container);

        Map<String, String> env = new HashMap<>();
        for (EnvVar var : container.getEnv()) {
            if (var.getValue() != null) {
                env.put(var.getName(), var.getValue());
            } else {
                // The Job's name, as Kubernetes labels its pods.
                assertThat(var.getValueFrom().getFieldRef().getFieldPath())
                        .isEqualTo("metadata.labels['batch.kubernetes.io/job-name']");
                env.put(var.getName(), job.getMetadata().getName());
            }
        }
        String secretFile = env.remove("SWITCHML_JOB_SECRET_FILE");
        assertThat(mountedVolume(pod, container, secretFile).getSecret()).as(secretFile).isNotNull();
        List<String> expectedControllers = new ArrayList<>();
        for (int i = 0; i < sts.getSpec().getReplicas(); i++) {
            expectedControllers.add(sts.getMetadata().getName() + "-" + i + "." + sts.getSpec().getServiceName()
                    + ".switchml.svc:" + ProtocolConstants.CONTROLLER_TCP_PORT);
        }
        for (int index = 0; index < completions; index++) {
            Map<String, String> podEnv = new HashMap<>(env);
            podEnv.put("JOB_COMPLETION_INDEX", String.valueOf(index));   // what Kubernetes adds
            SwitchMLConfig config = SwitchMLConfig.builder().environment(podEnv).build();
            assertThat(config.rank()).isEqualTo(index);
            assertThat(config.workers()).isEqualTo(completions);
            assertThat(config.job()).isEqualTo(job.getMetadata().getName());
            assertThat(config.controllers().stream().map(Object::toString).toList())
                    .as("the active switch, then its standby").isEqualTo(expectedControllers);
        }
        assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(mountedVolume(pod, container, "/tmp").getEmptyDir()).isNotNull();
        assertThat(container.getResources().getLimits()).containsKey("memory");
    }

    @Test
    void aPyTorchJobsPodsNameTheSwitchesAndTheJob() {
        GenericKubernetesResource job = OBJECTS.values().stream().flatMap(List::stream)
                .filter(o -> o.getKind().equals("PyTorchJob")).map(GenericKubernetesResource.class::cast)
                .findFirst().orElseThrow();
        assertThat(job.getApiVersion()).isEqualTo("kubeflow.org/v1");
        @SuppressWarnings("unchecked")
        Map<String, Object> replicaSpecs = (Map<String, Object>) ((Map<String, Object>) job.getAdditionalProperties()
                .get("spec")).get("pytorchReplicaSpecs");
        assertThat(replicaSpecs).containsOnlyKeys("Master", "Worker");
        replicaSpecs.forEach((role, spec) -> {
            JsonNode tree = Manifests.mapper().valueToTree(spec);
            Set<String> fields = new TreeSet<>();
            fields.addAll(tree.propertyNames());
            assertThat(Set.of("replicas", "restartPolicy", "template")).as(role).containsAll(fields);
            PodTemplateSpec template = Manifests.strict(tree.get("template"), PodTemplateSpec.class, role + ".template");
            Container container = template.getSpec().getContainers().get(0);
            assertEnvironmentNames(container);
            Map<String, String> env = container.getEnv().stream().filter(v -> v.getValue() != null)
                    .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
            String controllers = env.get(SwitchMLConfig.Key.CONTROLLERS.environmentVariable());
            assertThat(controllers.split(",")[0]).as("SWITCHML_CONTROLLER is the active one")
                    .isEqualTo(env.get(SwitchMLConfig.Key.CONTROLLER.environmentVariable()));
            assertThat(container.getEnv()).anySatisfy(v -> {
                assertThat(v.getName()).isEqualTo(SwitchMLConfig.Key.JOB.environmentVariable());
                assertThat(v.getValueFrom().getFieldRef().getFieldPath())
                        .isEqualTo("metadata.labels['training.kubeflow.org/job-name']");
            });
        });
    }

    /** Every variable set is a worker setting (SWITCHML_<KEY>), one the launcher script reads, or a launcher's. */
    private static void assertEnvironmentNames(Container container) {
        Set<String> settings = Arrays.stream(SwitchMLConfig.Key.values()).map(SwitchMLConfig.Key::environmentVariable)
                .collect(Collectors.toSet());
        String launcher = Manifests.read(Manifests.DIR.resolve("../../dist/src/bin/switchml"))
                + Manifests.read(Manifests.DIR.resolve("../../dist/src/bin/switchml-java.sh"));
        for (EnvVar var : container.getEnv()) {
            String name = var.getName();
            assertThat(settings.contains(name) || LAUNCHER_VARIABLES.contains(name)
                    || (name.startsWith(SwitchMLConfig.ENVIRONMENT_PREFIX) && launcher.contains(name)))
                    .as("%s is no worker setting, no variable of bin/switchml and no launcher's", name).isTrue();
        }
    }

    /** The switch's own command line (the lean image's entrypoint is `switchml switch`) over the arguments. */
    private static ParseResult switchCommandLine(List<String> args) {
        List<String> line = new ArrayList<>();
        line.add("switch");
        line.addAll(args);
        return new CommandLine(new SwitchServerCommand()).parseArgs(line.toArray(String[]::new)).subcommand();
    }

    /** The volume mounted at or above the path in the container. */
    private static Volume mountedVolume(PodSpec pod, Container container, String path) {
        VolumeMount mount = container.getVolumeMounts().stream()
                .filter(m -> path.equals(m.getMountPath()) || path.startsWith(m.getMountPath() + "/"))
                .findFirst().orElseThrow(() -> new AssertionError(path + " is on no volume of " + container.getName()));
        return pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + mount.getName()));
    }

    private static <T extends HasMetadata> T one(Class<T> type) {
        List<T> found = OBJECTS.values().stream().flatMap(List::stream).filter(type::isInstance).map(type::cast).toList();
        assertThat(found).as("one %s in deploy/kubernetes", type.getSimpleName()).hasSize(1);
        return found.get(0);
    }
}
