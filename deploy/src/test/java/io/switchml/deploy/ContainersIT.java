package io.switchml.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.protocol.ProtocolConstants;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The image archives and the switch's manifest under podman (the image profile builds the archives before this
 * runs: mvn -B -Pimage verify, as .ci/run does): both archives load; the lean image is what it says (entrypoint,
 * user, ports, at most 120 MB); a switch container and two rank containers of the full image all-reduce exactly
 * (host network, read-only root file systems); and {@code podman kube play} of the switch's StatefulSet's pod
 * (deploy/kubernetes/switch, as kustomize names its image) answers the gRPC health check.
 *
 * <p>podman runs containers here through src/test/podman/runc-without-rlimits (the sandbox refuses setrlimit).
 * Where podman is not installed the test is skipped, and says so on standard error.
 */
class ContainersIT {
    private static final Path IMAGES = Path.of(System.getProperty("switchml.images.dir", "../dist/target/images"));
    private static final Path RUNTIME = Path.of("src/test/podman/runc-without-rlimits").toAbsolutePath();
    private static final long SWITCH_IMAGE_LIMIT_BYTES = 120_000_000L;
    private static String switchImage;
    private static String fullImage;

    @BeforeAll
    static void loadTheArchives() throws Exception {
        if (!onPath("podman") || !onPath("runc")) {
            String why = "ContainersIT SKIPPED: podman or runc is not installed (apt-get install podman runc; .ci/run"
                    + " installs them), so the images and the switch's manifest were NOT tested under podman";
            System.err.println("\n*** " + why + " ***\n");
            Assumptions.abort(why);
        }
        for (String archive : List.of("switchml-switch.tar", "switchml.tar")) {
            assertThat(IMAGES.resolve(archive)).as("the image profile writes it: mvn -B -Pimage package").exists();
        }
        switchImage = load(IMAGES.resolve("switchml-switch.tar"));
        fullImage = load(IMAGES.resolve("switchml.tar"));
    }

    /** The loaded images go again, so that the runs of a CI machine leave no image behind (the archives stay). */
    @AfterAll
    static void removeTheImages() throws Exception {
        for (String image : new String[] {switchImage, fullImage}) {
            if (image != null) {
                podman(120, "rmi", "--force", image);
            }
        }
    }

    @Test
    void theSwitchImageRunsTheSwitchAsANonRootUserWithItsPortsInAtMost120Mb() throws Exception {
        String inspect = podman(60, "image", "inspect", "--format",
                "{{json .Config.Entrypoint}} {{.Config.User}} {{json .Config.ExposedPorts}} {{.Size}}", switchImage)
                .requireSuccess();
        assertThat(inspect).contains("[\"/opt/switchml/bin/switchml\",\"switch\"]");
        assertThat(inspect).contains(" 10001:10001 ");
        assertThat(inspect).contains("\"" + ProtocolConstants.CONTROLLER_TCP_PORT + "/tcp\"")
                .contains("\"" + ProtocolConstants.SWITCH_UDP_PORT + "/udp\"").contains("\"9464/tcp\"");
        long size = Long.parseLong(inspect.trim().substring(inspect.trim().lastIndexOf(' ') + 1));
        System.out.printf("ContainersIT: %s is %.1f MB, %s %.1f MB%n", switchImage, size / 1e6, fullImage,
                Long.parseLong(podman(60, "image", "inspect", "--format", "{{.Size}}", fullImage).requireSuccess().trim())
                        / 1e6);
        assertThat(size).as("the switch image's size").isLessThanOrEqualTo(SWITCH_IMAGE_LIMIT_BYTES);
        String full = podman(60, "image", "inspect", "--format", "{{json .Config.Entrypoint}} {{.Config.User}}",
                fullImage).requireSuccess();
        assertThat(full).contains("[\"/opt/switchml/bin/switchml\"]").contains("10001:10001");
    }

    @Test
    void twoRankContainersAllReduceExactlyThroughTheSwitchContainer() throws Exception {
        int controllerPort = freeTcpPort();
        int dataplanePort = freeUdpPort();
        String name = "switchml-it-switch-" + ProcessHandle.current().pid();
        try {
            // The lean image's entrypoint is `switchml switch`: these options are appended.
            podman(120, "run", "-d", "--name", name, "--network", "host", "--read-only", switchImage,
                    "--controller-port", String.valueOf(controllerPort), "--port", String.valueOf(dataplanePort),
                    "--no-ipc").requireSuccess();
            awaitLine(name, "switchml switch ready");
            List<Process> ranks = new ArrayList<>();
            for (int rank = 0; rank < 2; rank++) {
                ranks.add(podmanProcess("run", "--rm", "--name", name + "-rank" + rank, "--network", "host",
                        "--read-only", fullImage, "worker", "--controller", "127.0.0.1:" + controllerPort,
                        "--job", "containers-it", "--workers", "2", "--rank", String.valueOf(rank), "--size", "1MiB",
                        "--iters", "3", "--warmup", "1", "--verify"));
            }
            for (int rank = 0; rank < 2; rank++) {
                Result result = finish(ranks.get(rank), 300);
                assertThat(result.exitCode()).as("rank %d:%n%s%nswitch:%n%s", rank, result.output(), logs(name))
                        .isZero();
                assertThat(result.output()).as("rank %d's verified row", rank)
                        .contains("rank " + rank + " of 2 joining job 'containers-it'").containsPattern("\\byes\\b");
            }
            assertThat(logs(name)).contains("job 'containers-it'");
        } finally {
            podman(60, "rm", "-f", name);
        }
    }

    @Test
    void kubePlayOfTheSwitchsPodAnswersTheGrpcHealthCheck(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        StatefulSet sts = (StatefulSet) Manifests.object(
                Manifests.documents(Manifests.DIR.resolve("switch/statefulset.yaml")).get(0), "switch/statefulset.yaml");
        JsonNode kustomization = Manifests.documents(Manifests.DIR.resolve("switch/kustomization.yaml")).get(0);
        JsonNode image = kustomization.path("images").get(0);
        String kustomizedImage = image.path("newName").asString() + ":" + image.path("newTag").asString();
        assertThat(kustomizedImage).as("the kustomization names the image the archive loads as").isEqualTo(switchImage);

        // The StatefulSet's pod, as its controller would make it, on the host's network (podman kube play runs Pods
        // and Deployments, not StatefulSets), with ports of its own on this shared machine.
        int controllerPort = freeTcpPort();
        int dataplanePort = freeUdpPort();
        int metricsPort = freeTcpPort();
        PodSpec spec = sts.getSpec().getTemplate().getSpec();
        spec.setHostNetwork(true);
        spec.setAffinity(null);
        Container container = spec.getContainers().get(0);
        assertThat(container.getImage()).isEqualTo(image.path("name").asString());
        container.setImage(kustomizedImage);
        List<String> args = new ArrayList<>();
        for (String arg : container.getArgs()) {
            args.add(arg.startsWith("--metrics-port=") ? "--metrics-port=" + metricsPort : arg);
        }
        args.add("--controller-port=" + controllerPort);
        args.add("--port=" + dataplanePort);
        container.setArgs(args);
        // On the host's network podman publishes no ports (it refuses port mappings there); the ports listen as given.
        container.setPorts(List.of());
        String podName = "switchml-it-" + ProcessHandle.current().pid();
        Pod pod = new PodBuilder().withNewMetadata().withName(podName)
                .withLabels(sts.getSpec().getTemplate().getMetadata().getLabels()).endMetadata().withSpec(spec).build();
        // The operator token's Secret, as `kubectl create secret generic` makes it.
        Volume tokenVolume = spec.getVolumes().stream().filter(v -> v.getSecret() != null).findFirst().orElseThrow();
        byte[] token = new byte[32];
        new SecureRandom().nextBytes(token);
        Secret secret = new SecretBuilder().withNewMetadata().withName(tokenVolume.getSecret().getSecretName())
                .endMetadata().withData(Map.of("token", Base64.getEncoder().encodeToString(
                        HexFormat.of().formatHex(token).getBytes(StandardCharsets.US_ASCII)))).build();
        Path yaml = dir.resolve("switch-pod.yaml");
        Files.writeString(yaml, Manifests.yaml(secret) + Manifests.yaml(pod));
        try {
            podman(180, "kube", "play", yaml.toString()).requireSuccess();
            String containerName = podName + "-" + container.getName();
            awaitLine(containerName, "switchml switch ready");
            ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", controllerPort).usePlaintext().build();
            try {
                HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);
                for (String service : List.of("", ControllerGrpc.SERVICE_NAME)) {
                    HealthCheckResponse response = checkHealth(health, service, containerName);
                    assertThat(response.getStatus()).as("health of '%s'", service)
                            .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
                }
            } finally {
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
            // The token came from the Secret: the switch says it takes credentials.
            assertThat(logs(containerName)).contains("switchml switch ready");
        } finally {
            podman(120, "kube", "down", yaml.toString());
            podman(60, "secret", "rm", secret.getMetadata().getName());
        }
    }

    private static HealthCheckResponse checkHealth(HealthGrpc.HealthBlockingStub health, String service,
                                                   String containerName) throws Exception {
        StatusRuntimeException last = null;
        for (int attempt = 0; attempt < 60; attempt++) {
            try {
                return health.withDeadlineAfter(5, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.newBuilder().setService(service).build());
            } catch (StatusRuntimeException e) {
                last = e;
                Thread.sleep(500);
            }
        }
        throw new AssertionError("no health answer from the kube-played switch: " + last + "\n" + logs(containerName),
                last);
    }

    /** Loads an archive; the image's name as podman reports it. */
    private static String load(Path archive) throws Exception {
        String output = podman(600, "load", "-i", archive.toAbsolutePath().toString()).requireSuccess();
        Matcher loaded = Pattern.compile("Loaded image(?:\\(s\\))?: (\\S+)").matcher(output);
        if (!loaded.find()) {
            fail("podman load " + archive + " named no image:\n" + output);
        }
        return loaded.group(1);
    }

    private static void awaitLine(String container, String line) throws Exception {
        for (int attempt = 0; attempt < 240; attempt++) {
            String logs = logs(container);
            if (logs.contains(line)) {
                return;
            }
            String state = podman(30, "inspect", "--format", "{{.State.Status}}", container).output().trim();
            if (state.equals("exited") || state.equals("stopped")) {
                fail(container + " exited before '" + line + "':\n" + logs);
            }
            Thread.sleep(250);
        }
        fail("no '" + line + "' from " + container + " in 60 s:\n" + logs(container));
    }

    private static String logs(String container) throws Exception {
        return podman(30, "logs", container).output();
    }

    private record Result(int exitCode, String output, String command) {
        String requireSuccess() {
            if (exitCode != 0) {
                fail(command + " failed (" + exitCode + "):\n" + output);
            }
            return output;
        }
    }

    private static Result podman(int timeoutSeconds, String... args) throws Exception {
        return finish(podmanProcess(args), timeoutSeconds);
    }

    private static Process podmanProcess(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("podman", "--runtime", RUNTIME.toString()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    private static Result finish(Process process, int timeoutSeconds) throws Exception {
        String command = String.join(" ", process.info().arguments().map(List::of).orElse(List.of()));
        StringBuilder output = new StringBuilder();
        Thread reader = new Thread(() -> {
            try {
                output.append(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                output.append(e);
            }
        });
        reader.start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            reader.join(5000);
            fail("podman " + command + " did not finish in " + timeoutSeconds + " s:\n" + output);
        }
        reader.join();
        return new Result(process.exitValue(), output.toString(), "podman " + command);
    }

    private static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    private static int freeTcpPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static int freeUdpPort() throws IOException {
        try (DatagramSocket socket = new DatagramSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
