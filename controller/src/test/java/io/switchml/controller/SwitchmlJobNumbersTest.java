package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.controller.compat.proto.PacketSize;
import io.switchml.controller.compat.proto.SessionGrpc;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.controller.proto.JoinResponse;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** SwitchML sessions and this project's jobs share the switch's job numbers without clashing. */
class SwitchmlJobNumbersTest extends ControllerTestSupport {

    @Test
    void aJobJoinedAfterSessionZeroTakesAnotherNumber() {
        SessionGrpc.newBlockingStub(channel).withDeadlineAfter(CLIENT_DEADLINE_MS, TimeUnit.MILLISECONDS)
                .udpSession(UdpSessionRequest.newBuilder().setSessionId(0).setRank(0).setNumWorkers(1)
                        .setIpv4(0x7F00_0009).setPacketSize(PacketSize.MTU_256).build());
        assertThat(service.dataplane().job(0)).hasValueSatisfying(job -> assertThat(job.name()).isEqualTo("switchml-session-0"));

        JoinResponse ours = remember(stub().join(joinRequest("ours", 0, 1)));

        assertThat(ours.getJobNumber()).isNotZero();
        assertThat(service.dataplane().job(ours.getJobNumber())).hasValueSatisfying(job -> assertThat(job.name()).isEqualTo("ours"));
    }
}
