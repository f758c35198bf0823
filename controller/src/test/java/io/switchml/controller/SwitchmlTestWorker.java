package io.switchml.controller;

import io.grpc.ManagedChannel;
import io.switchml.controller.compat.proto.BarrierRequest;
import io.switchml.controller.compat.proto.BroadcastRequest;
import io.switchml.controller.compat.proto.PacketSize;
import io.switchml.controller.compat.proto.SessionGrpc;
import io.switchml.controller.compat.proto.SyncGrpc;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.controller.compat.proto.UdpSessionResponse;
import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadSize;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A test double of a SwitchML worker with one worker thread: it speaks only SwitchML's control
 * protocol (switchml.proto) and SwitchML's packets (64 or 256 elements), sets its session up in the
 * order SwitchML's UDP (DPDK) worker does, and runs SwitchML's worker algorithm. Packet p goes to slot (p + shift) mod W in set ((p + shift) / W) mod 2, where the shift
 * carries the alternation over from one all-reduce to the next; the result for p releases packet
 * p + W on the same slot and the other set; a packet unanswered for {@link #RETRANSMIT_MS} is sent
 * again. The tsi is the packet id and the job number field the all-reduce's short id, both SwitchML's
 * own, used here to drop stale results. Not thread-safe: one caller, as one SwitchML thread.
 */
final class SwitchmlTestWorker implements AutoCloseable {
    static final int WINDOW = 32;
    static final long RETRANSMIT_MS = 50;
    static final long ALL_REDUCE_TIMEOUT_MS = 60_000;

    private final int rank;
    private final int workers;
    private final PayloadSize size;
    /** Elements per packet. */
    private final int k;
    private final DatagramSocket socket;
    private final ManagedChannel channel;
    private InetSocketAddress switchAddress;
    private int shortJobId;
    private long poolShift;
    private int retransmissions;

    /** How long a receive waits before the retransmission timers are checked. */
    static final int POLL_MS = 5;

    SwitchmlTestWorker(int rank, int workers, PayloadSize size, DatagramSocket socket, ManagedChannel channel)
            throws IOException {
        socket.setSoTimeout(POLL_MS);
        this.rank = rank;
        this.workers = workers;
        this.size = size;
        this.k = size.elements();
        this.socket = socket;
        this.channel = channel;
    }

    /**
     * Where the test may hold the ranks of one session setup: rank 0 counts {@code rootRegistered}
     * down once its UdpSession has returned, and the other ranks wait for {@code othersMayGo} before
     * their first Barrier, so that they register after rank 0 however the threads run.
     */
    static final class SetupGates {
        final CountDownLatch rootRegistered = new CountDownLatch(1);
        final CountDownLatch othersMayGo = new CountDownLatch(1);
        /** The session id, once rank 0 has registered. */
        volatile long sessionId;
    }

    /**
     * SwitchML's session setup (its DPDK backend's SetupSwitch): rank 0 proposes a session id (its
     * nanosecond clock unless {@code rootSessionId} is given) and every rank learns it by Broadcast
     * from root 0; rank 0 calls UdpSession alone, then Barrier; every other rank calls Barrier, then
     * UdpSession; all call Barrier once more before sending. Returns the session id.
     */
    long setUpSession(Long rootSessionId, SetupGates gates, int switchUdpPort) throws InterruptedException {
        long proposal = rank != 0 ? 0 : rootSessionId != null ? rootSessionId : nanosecondClock();
        long sessionId = broadcast(proposal, 0);
        if (rank == 0) {
            udpSession(sessionId, switchUdpPort);
            gates.sessionId = sessionId;
            gates.rootRegistered.countDown();
            barrier();
        } else {
            if (!gates.othersMayGo.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("rank " + rank + " waited 30 s for the test to let it register");
            }
            barrier();
            udpSession(sessionId, switchUdpPort);
        }
        barrier();
        return sessionId;
    }

    private static long nanosecondClock() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** UdpSession, which SwitchML's controller answers at once; learns the switch's address. */
    void udpSession(long sessionId, int switchUdpPort) {
        UdpSessionResponse response = SessionGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .udpSession(UdpSessionRequest.newBuilder().setSessionId(sessionId).setRank(rank).setNumWorkers(workers)
                        .setMac(0x02_00_00_00_00_00L | rank).setIpv4(ipv4Bits(socket.getLocalAddress()))
                        .setPacketSize(PacketSize.forNumber(size.code())).build());
        switchAddress = new InetSocketAddress(SwitchmlSessions.ipv4(response.getIpv4()), switchUdpPort);
    }

    void barrier() {
        SyncGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .barrier(BarrierRequest.newBuilder().setNumWorkers(workers).build());
    }

    long broadcast(long value, int root) {
        return SyncGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS).broadcast(BroadcastRequest.newBuilder()
                .setValue(value).setRank(rank).setNumWorkers(workers).setRoot(root).build()).getValue();
    }

    int retransmissions() {
        return retransmissions;
    }

    /** The element-wise sum over all workers of {@code data}, through the switch. */
    int[] allReduce(int[] data) throws IOException {
        int jobId = shortJobId++ & 0xFF;
        int packets = (data.length + k - 1) / k;
        int[] sum = new int[data.length];
        boolean[] received = new boolean[packets];
        long[] sentAt = new long[WINDOW];
        int[] outstanding = new int[WINDOW];
        Arrays.fill(outstanding, -1);
        byte[] buffer = new byte[size.packetBytes()];
        for (int p = 0; p < Math.min(WINDOW, packets); p++) {
            send(data, jobId, p, outstanding, sentAt);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ALL_REDUCE_TIMEOUT_MS);
        int done = 0;
        while (done < packets) {
            if (System.nanoTime() > deadline) {
                throw new IOException("rank " + rank + ": all-reduce incomplete after " + ALL_REDUCE_TIMEOUT_MS + " ms, "
                        + done + " of " + packets + " packets back");
            }
            DatagramPacket datagram = new DatagramPacket(buffer, buffer.length);
            try {
                socket.receive(datagram);
            } catch (SocketTimeoutException e) {
                retransmitExpired(data, jobId, outstanding, sentAt);
                continue;
            }
            AggregationPacket result = new AggregationPacket().wrap(ByteBuffer.wrap(buffer, 0, datagram.getLength()), 0);
            int p = result.tsi();
            if (datagram.getLength() != buffer.length || result.jobNumber() != jobId || p < 0 || p >= packets
                    || received[p] || result.poolIndex() != poolIndex(p)) {
                continue; // a duplicate, or a late result of an earlier all-reduce
            }
            received[p] = true;
            done++;
            for (int i = p * k; i < Math.min(data.length, (p + 1) * k); i++) {
                sum[i] = result.element(i - p * k);
            }
            int slot = slot(p);
            outstanding[slot] = -1;
            if (p + WINDOW < packets) {
                send(data, jobId, p + WINDOW, outstanding, sentAt);
            }
            retransmitExpired(data, jobId, outstanding, sentAt);
        }
        poolShift += packets;
        return sum;
    }

    /**
     * Sends the first window of an all-reduce of {@code data} and returns without waiting for the
     * results: a run that is stopped with its packets in flight. Calling it again sends the same
     * packets again (as its retransmissions would). Returns how many packets it sent.
     */
    int sendFirstWindow(int[] data) throws IOException {
        int packets = Math.min(WINDOW, (data.length + k - 1) / k);
        int[] outstanding = new int[WINDOW];
        long[] sentAt = new long[WINDOW];
        for (int p = 0; p < packets; p++) {
            send(data, shortJobId & 0xFF, p, outstanding, sentAt);
        }
        return packets;
    }

    private void retransmitExpired(int[] data, int jobId, int[] outstanding, long[] sentAt) throws IOException {
        long now = System.nanoTime();
        for (int slot = 0; slot < WINDOW; slot++) {
            if (outstanding[slot] >= 0 && now - sentAt[slot] > TimeUnit.MILLISECONDS.toNanos(RETRANSMIT_MS)) {
                retransmissions++;
                send(data, jobId, outstanding[slot], outstanding, sentAt);
            }
        }
    }

    /** Builds packet p from the source data (a retransmission rebuilds it the same way) and sends it. */
    private void send(int[] data, int jobId, int p, int[] outstanding, long[] sentAt) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate(size.packetBytes());
        AggregationPacket packet = new AggregationPacket().wrap(bytes, 0)
                .header(size, jobId, p, slot(p), set(p), 0, 0);
        for (int i = 0; i < k; i++) {
            int at = p * k + i;
            packet.element(i, at < data.length ? data[at] : 0);
        }
        socket.send(new DatagramPacket(bytes.array(), bytes.capacity(), switchAddress));
        outstanding[slot(p)] = p;
        sentAt[slot(p)] = System.nanoTime();
    }

    private int slot(int p) {
        return (int) ((p + poolShift) % WINDOW);
    }

    private int set(int p) {
        return (int) ((p + poolShift) / WINDOW % 2);
    }

    private int poolIndex(int p) {
        return set(p) << 15 | slot(p);
    }

    private static int ipv4Bits(InetAddress address) {
        byte[] b = address.getAddress();
        return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | (b[3] & 0xFF);
    }

    @Override
    public void close() {
        socket.close();
    }
}
