package io.switchml.controller;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.StatusRequest;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Starting and stopping the service itself (not {@link ControllerTestSupport}: it starts several). */
class AggregationServiceTest {
    private static final String LOOPBACK = "127.0.0.1";
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    private AggregationService start(SwitchConfig config, int controllerPort) {
        AggregationService service = AggregationService.start(config, LOOPBACK, controllerPort);
        toClose.add(service);
        return service;
    }

    private static int freeUdpPort() throws IOException {
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getByName(LOOPBACK))) {
            return socket.getLocalPort();
        }
    }

    @Test
    void aSecondServiceOnTheSameControllerPortFailsClearlyAndReleasesItsSwitchPort() throws IOException {
        AggregationService first = start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0), 0);
        int controllerPort = first.controllerPort();
        int udpPort = freeUdpPort();

        SwitchConfig onUdpPort = new SwitchConfig().bindAddress(LOOPBACK).basePort(udpPort);
        assertThatThrownBy(() -> start(onUdpPort, controllerPort))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot start the controller on 127.0.0.1:" + controllerPort)
                .hasMessageContaining("in use");

        // The failed start closed its switch: the UDP port can be bound by the next service.
        AggregationService third = start(onUdpPort, 0);
        assertThat(third.dataplane().ports()).containsExactly(udpPort);
        assertThat(third.controllerPort()).isNotEqualTo(controllerPort);

        // Both running services answer.
        for (AggregationService s : List.of(first, third)) {
            ManagedChannel channel = ManagedChannelBuilder.forAddress(LOOPBACK, s.controllerPort()).usePlaintext().build();
            toClose.add(() -> {
                channel.shutdownNow();
                channel.awaitTermination(5, TimeUnit.SECONDS);
            });
            JobParameters p = JobParameters.newBuilder().setNumWorkers(1).setElementsPerPacket(64).setSlotsPerThread(4)
                    .setThreads(1).build();
            ControllerGrpc.ControllerBlockingStub stub = ControllerGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS);
            JoinResponse response = stub.join(JoinRequest.newBuilder().setJobName("solo").setRank(0).setParameters(p)
                    .setAddress(LOOPBACK).addPorts(40_000).setTimeoutMs(5_000).build());
            assertThat(response.getSwitchPortsList()).containsExactly(s.dataplane().ports()[0]);
            assertThat(stub.status(StatusRequest.getDefaultInstance()).getJobsCount()).isEqualTo(1);
        }
    }

    @Test
    void theControllerServesTheStandardHealthServiceWithoutCredentials() {
        AggregationService service = start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0), 0);
        ManagedChannel channel = ManagedChannelBuilder.forAddress(LOOPBACK, service.controllerPort()).usePlaintext().build();
        toClose.add(() -> {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        });
        io.grpc.health.v1.HealthGrpc.HealthBlockingStub health = io.grpc.health.v1.HealthGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS);
        for (String name : new String[]{"", ControllerGrpc.SERVICE_NAME}) {
            assertThat(health.check(io.grpc.health.v1.HealthCheckRequest.newBuilder().setService(name).build()).getStatus())
                    .as("service '%s'", name).isEqualTo(io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
        }
    }

    @Test
    void aSwitchListeningOnEveryAddressAnnouncesNoAddress() {
        AggregationService service = start(new SwitchConfig().bindAddress("0.0.0.0").basePort(0).portCount(2), 0);
        ManagedChannel channel = ManagedChannelBuilder.forAddress(LOOPBACK, service.controllerPort()).usePlaintext().build();
        toClose.add(() -> {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        });
        JobParameters p = JobParameters.newBuilder().setNumWorkers(1).setElementsPerPacket(256).setSlotsPerThread(4)
                .setThreads(2).build();
        JoinResponse response = ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .join(JoinRequest.newBuilder().setJobName("solo").setRank(0).setParameters(p).setAddress(LOOPBACK)
                        .addPorts(40_000).addPorts(40_001).setTimeoutMs(5_000).build());
        assertThat(response.getSwitchAddress()).isEmpty();
        int[] ports = service.dataplane().ports();
        assertThat(response.getSwitchPortsList()).containsExactly(ports[0], ports[1]);
    }

    @Test
    void closingTheServiceFreesItsPorts() throws IOException {
        int udpPort = freeUdpPort();
        AggregationService service = AggregationService.start(new SwitchConfig().bindAddress(LOOPBACK).basePort(udpPort),
                LOOPBACK, 0);
        int controllerPort = service.controllerPort();
        service.close();
        AggregationService again = start(new SwitchConfig().bindAddress(LOOPBACK).basePort(udpPort), controllerPort);
        assertThat(again.controllerPort()).isEqualTo(controllerPort);
        assertThat(again.dataplane().ports()).containsExactly(udpPort);
    }
}
