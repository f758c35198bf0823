package io.switchml.controller;

import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.switchml.dataplane.AggregationSwitch;

import java.util.List;
import java.util.concurrent.ScheduledExecutorService;

/**
 * SwitchML's own control services (switchml.proto: Session and Sync), served next to this
 * project's Controller so that SwitchML's workers can use this switch. SwitchML's controller
 * listens on TCP 50099, as {@code switchml switch} does by default.
 */
final class SwitchmlServices {
    /** How long a SwitchML worker may wait in a barrier or broadcast (SwitchML's calls carry no timeout). */
    static final long WAIT_MS = 600_000;

    private SwitchmlServices() {
    }

    /** Both services, over these sessions; {@code waitMs} bounds every wait. */
    static List<ServerServiceDefinition> create(AggregationSwitch dataplane, SwitchmlSessions sessions,
                                                ScheduledExecutorService timer, long waitMs) {
        SwitchmlSessionService session = new SwitchmlSessionService(sessions, dataplane);
        return List.of(ServerInterceptors.intercept(session, new CallLocalAddress()),
                new SwitchmlSyncService(new SwitchmlSync(timer, waitMs)).bindService());
    }
}
