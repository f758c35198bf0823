package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status.Code;
import io.switchml.controller.compat.proto.PacketSize;
import io.switchml.controller.compat.proto.SessionGrpc;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.controller.compat.proto.UdpSessionResponse;
import io.switchml.controller.proto.TransportReport;
import io.switchml.controller.proto.WorkerTransport;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A job whose ranks are all gone, with their watch off, is reclaimed once nothing of it was heard for
 * the idle limit: its slots and number come back. A job whose ranks keep calling stays.
 */
class IdleJobTest extends ControllerTestSupport {
    private static final int IDLE_MS = 1_500;

    @Override
    ControllerSecurity security() {
        return new ControllerSecurity().jobIdleTimeoutMs(IDLE_MS);
    }

    @Test
    void aJobNobodyTalksForIsReclaimedAndItsSlotsComeBack() throws InterruptedException {
        int used = service.dataplane().slotPool().usedSlots();
        int number = formJob("abandoned", 2, 40_000); // ranks without a watch, then silence
        assertThat(service.dataplane().slotPool().usedSlots()).isGreaterThan(used);

        awaitRemoved(number);
        assertThat(service.dataplane().slotPool().usedSlots()).isEqualTo(used);
        assertFails(() -> stub().leave(leave(number, 0)), Code.NOT_FOUND, "has ended");
        // The name is free again.
        assertThat(formJob("abandoned", 2, 40_000)).isGreaterThanOrEqualTo(0);
    }

    @Test
    void aJobWhoseRanksKeepReportingStays() throws InterruptedException {
        int number = formJob("alive", 2, 40_000);
        int other = formJob("silent", 2, 41_000);
        TransportReport report = TransportReport.newBuilder().setJobNumber(number).setJobId(jobId(number)).setRank(0)
                .setTransport(WorkerTransport.getDefaultInstance()).build();
        // Report (as a live worker does every second) until the silent job, formed at the same time, is reclaimed.
        while (service.dataplane().job(other).isPresent()) {
            stub().reportTransport(report);
            Thread.sleep(50);
        }
        assertThat(service.dataplane().job(number)).as("the job that kept reporting").isPresent();
        stub().leave(leave(number, 0));
        stub().leave(leave(number, 1));
    }

    /** Security round 4, finding 3: packets without progress (one rank's, or a spoofer's) do not keep a job alive. */
    @Test
    void packetsThatCompleteNoRoundDoNotKeepAJobAlive() throws Exception {
        int number = formJob("stuck", 2, 42_000);
        try (DatagramSocket rank0 = new DatagramSocket(new InetSocketAddress(LOOPBACK, 42_000))) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLIENT_DEADLINE_MS + 4L * IDLE_MS);
            int sent = 0;
            while (service.dataplane().job(number).isPresent()) {
                sendPacket(rank0, number, 0, 0, 0); // rank 1 never sends: the round never completes
                sent++;
                awaitCounter("packets_received", sent);
                assertThat(System.nanoTime()).as("job %d reclaimed while its rank 0 sends packets", number)
                        .isLessThan(deadline);
                Thread.sleep(50);
            }
            // Every 50 ms or so a packet reached it for longer than the idle limit: such packets used to keep it forever.
            assertThat(sent).as("packets reached the switch while the job was idle").isGreaterThan(IDLE_MS / 100);
        }
    }

    @Test
    void anIdleSwitchmlSessionIsReclaimedToo() throws InterruptedException {
        // SwitchML's workers never leave: a session of one rank, installed at job number 7, then silence.
        UdpSessionResponse installed = SessionGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .udpSession(UdpSessionRequest.newBuilder().setSessionId(7).setRank(0).setNumWorkers(1)
                        .setIpv4(0x7F00_0001).setPacketSize(PacketSize.MTU_256).build());
        assertThat(installed.getSessionId()).isEqualTo(7);
        assertThat(service.dataplane().job(7)).isPresent();
        awaitRemoved(7);
        assertThat(service.dataplane().slotPool().usedSlots()).isZero();
    }

    private void awaitRemoved(int number) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLIENT_DEADLINE_MS + 4L * IDLE_MS);
        while (service.dataplane().job(number).isPresent()) {
            assertThat(System.nanoTime()).as("job %d reclaimed", number).isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
