package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.IssueJobSecretRequest;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.dataplane.SwitchConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Security round 4, finding 9: with --issued-secrets-file, the operator's secrets outlive a restart. */
class IssuedSecretsFileTest {
    private static final String OPERATOR = "operator-token-0123456789";
    private static final String LOOPBACK = "127.0.0.1";

    @Test
    void anIssuedSecretStillGuardsItsNameAfterARestart(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("issued-secrets");
        String issued = withSwitch(file, stub -> ControllerTestSupport.withCredentials(stub, OPERATOR, null)
                .issueJobSecret(IssueJobSecretRequest.newBuilder().setJobName("resnet50").build()).getSecret());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(Files.readString(file)).as("digests only").doesNotContain(issued).contains("\tresnet50");

        // Another switch process, the same file.
        withSwitch(file, stub -> {
            assertThatThrownBy(() -> ControllerTestSupport.withCredentials(stub, null, "another-secret-0123456789").join(join("resnet50")))
                    .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED))
                    .hasMessageContaining("the operator issued");
            JoinResponse joined = ControllerTestSupport.withCredentials(stub, null, issued).join(join("resnet50"));
            assertThat(joined.getJobNumber()).isNotNegative();
            return null;
        });
    }

    @Test
    void aFileThatIsNotDigestsStopsTheStartWithTheLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("issued-secrets");
        Files.writeString(file, "not a digest line\n");
        assertThatThrownBy(() -> withSwitch(file, stub -> null)).hasMessageContaining(file + ": line 1 is not DIGEST<TAB>JOB_NAME");
    }

    private static JoinRequest join(String job) {
        return JoinRequest.newBuilder().setJobName(job).setRank(0).setAddress(LOOPBACK).addPorts(46_000)
                .setTimeoutMs(10_000).setParameters(JobParameters.newBuilder().setNumWorkers(1).setElementsPerPacket(64)
                        .setSlotsPerThread(8).setThreads(1)).build();
    }

    private static <T> T withSwitch(Path file, Function<ControllerGrpc.ControllerBlockingStub, T> body) throws InterruptedException {
        AggregationService service = AggregationService.start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0), LOOPBACK,
                0, new ControllerSecurity().operatorToken(OPERATOR).issuedSecretsFile(file));
        ManagedChannel channel = ManagedChannelBuilder.forAddress(LOOPBACK, service.controllerPort()).usePlaintext().build();
        try {
            return body.apply(ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS));
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
            service.close();
        }
    }
}
