package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status.Code;
import io.switchml.controller.compat.proto.PacketSize;
import io.switchml.controller.compat.proto.SessionGrpc;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.controller.compat.proto.UdpSessionResponse;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.LeaveRequest;
import io.switchml.controller.proto.StatusRequest;
import io.switchml.dataplane.SlotPool;
import io.switchml.protocol.ProtocolConstants;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Security round 4, finding 3: on a switch with its defaults no tenant takes the whole switch. Every
 * loopback address of one local user is one tenant (round 5: the user, as the kernel's socket table says), whose
 * running jobs hold at most half of the pool's slots and bytes and half of the job numbers; the operator's are
 * not counted. A local user's SwitchML sessions are its own tenant too.
 */
class FairShareTest extends ControllerTestSupport {
    private static final String OPERATOR = "operator-token-0123456789";

    @Override
    ControllerSecurity security() {
        return new ControllerSecurity().operatorToken(OPERATOR); // shares are on by default
    }

    @Test
    void oneTenantGetsHalfThePoolAndTheOperatorTheRest() {
        SlotPool pool = service.dataplane().slotPool();
        // Each asks for the most one job may: 16 threads x 1024 slots, a quarter of the default pool.
        JobParameters big = params(1, 16).toBuilder().setSlotsPerThread(ProtocolConstants.MAX_SLOTS / 16).build();
        int held = 0;
        for (int i = 0; i < 2; i++) {
            JoinResponse joined = get(joinAsync(joinRequest("big-" + i, 0, big, 40_000 + 100 * i).build()));
            held += service.dataplane().job(joined.getJobNumber()).orElseThrow().slots();
        }
        assertThat(held).isEqualTo(pool.poolSlots() / 2);
        // A third from another loopback address is the same tenant, with nothing of its share left.
        String refused = assertStatus(failure(joinAs(null, joinRequest("big-2", 0, big, 40_200).build())),
                Code.RESOURCE_EXHAUSTED, "its tenant " + selfTenant() + " may hold only", "--tenant-share 0.5");
        System.out.printf("a tenant holding %d of %d slots asks for %d more: %s%n", held, pool.poolSlots(),
                ProtocolConstants.MAX_SLOTS, refused);
        // The operator's jobs are no tenant's: they get the other half.
        for (int i = 0; i < 2; i++) {
            JobParameters p = big;
            int port = 41_000 + 100 * i;
            JoinResponse operators = get(async(() -> as(OPERATOR, null).join(joinRequest("operators-" + port, 0, p, port)
                    .build())));
            assertThat(service.dataplane().job(operators.getJobNumber()).orElseThrow().slots())
                    .isEqualTo(ProtocolConstants.MAX_SLOTS);
        }
    }

    @Test
    void oneTenantRunsAtMostHalfTheJobNumbers() {
        int share = ProtocolConstants.MAX_JOBS / 2;
        List<Integer> numbers = new ArrayList<>();
        for (int i = 0; i < share; i++) {
            numbers.add(formJob("small-" + i, 1, 40_000 + 10 * i));
        }
        assertStatus(failure(joinAsync(joinRequest("one-too-many", 0, 1))), Code.RESOURCE_EXHAUSTED,
                "tenant " + selfTenant() + " already runs " + share + " jobs", "--tenant-share");
        // A number comes back when a job ends.
        stub().leave(leave(numbers.get(0), 0));
        assertThat(formJob("one-too-many", 1, 40_000)).isNotNegative(); // the ended job's port
    }

    @Test
    void switchmlSessionsAreOneTenantAndTheOperatorEndsThem() {
        // Each session holds the most slots a job may (SwitchML's workers may use any of them): two fill their share.
        List<Integer> numbers = new ArrayList<>();
        for (int s = 1; s <= 2; s++) {
            session(s);
            numbers.add(jobNumberOf("switchml-session-" + s));
        }
        String refused = assertFails(() -> session(3), Code.RESOURCE_EXHAUSTED, "SwitchML's sessions of " + selfTenant() + " hold 32768 slots",
                "--tenant-share 0.5", "switchml ctl end-session");
        System.out.println("a third SwitchML session: " + refused);
        // The operator ends one (`switchml ctl end-session`); then the third fits.
        as(OPERATOR, null).leave(LeaveRequest.newBuilder().setJobNumber(numbers.get(0)).build());
        assertThat(service.dataplane().job(numbers.get(0))).isEmpty();
        session(3);
        assertThat(service.dataplane().job(jobNumberOf("switchml-session-3"))).isPresent();
    }

    private int jobNumberOf(String name) {
        return as(OPERATOR, null).status(StatusRequest.getDefaultInstance()).getJobsList().stream()
                .filter(j -> j.getJobName().equals(name)).findFirst().orElseThrow().getJobNumber();
    }

    /** A one-rank SwitchML session from 127.0.0.{1 + id}. */
    private UdpSessionResponse session(int id) {
        return SessionGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).udpSession(
                UdpSessionRequest.newBuilder().setSessionId(id).setRank(0).setNumWorkers(1).setIpv4(0x7F00_0001 + id)
                        .setPacketSize(PacketSize.MTU_256).build());
    }
}
