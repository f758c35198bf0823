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
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * A test double of a SwitchML worker with one worker thread: it speaks only SwitchML's control
 * protocol (switchml.proto) and SwitchML's packets of 64 elements, and runs SwitchML's worker
 * algorithm. Packet p goes to slot (p + shift) mod W in set ((p + shift) / W) mod 2, where the shift
 * carries the alternation over from one all-reduce to the next; the result for p releases packet
 * p + W on the same slot and the other set; a packet unanswered for {@link #RETRANSMIT_MS} is sent
 * again. The tsi is the packet id and the job number field the all-reduce's short id, both SwitchML's
 * own, used here to drop stale results. Not thread-safe: one caller, as one SwitchML thread.
 */
final class SwitchmlTestWorker implements AutoCloseable {
    static final PayloadSize SIZE = PayloadSize.B256;
    static final int K = SIZE.elements();
    static final int WINDOW = 32;
    static final long RETRANSMIT_MS = 50;
    static final long ALL_REDUCE_TIMEOUT_MS = 60_000;

    private final int rank;
    private final int workers;
    private final DatagramSocket socket;
    private final ManagedChannel channel;
    private InetSocketAddress switchAddress;
    private int shortJobId;
    private long poolShift;
    private int retransmissions;

    /** How long a receive waits before the retransmission timers are checked. */
    static final int POLL_MS = 5;

    SwitchmlTestWorker(int rank, int workers, DatagramSocket socket, ManagedChannel channel) throws IOException {
        socket.setSoTimeout(POLL_MS);
        this.rank = rank;
        this.workers = workers;
        this.socket = socket;
        this.channel = channel;
    }

    /** UdpSession: blocks until every rank of the session has called it; learns the switch's address. */
    void join(long sessionId, int switchUdpPort) {
        UdpSessionResponse response = SessionGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .udpSession(UdpSessionRequest.newBuilder().setSessionId(sessionId).setRank(rank).setNumWorkers(workers)
                        .setMac(0x02_00_00_00_00_00L | rank).setIpv4(ipv4Bits(socket.getLocalAddress()))
                        .setPacketSize(PacketSize.MTU_256).build());
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
        int packets = (data.length + K - 1) / K;
        int[] sum = new int[data.length];
        boolean[] received = new boolean[packets];
        long[] sentAt = new long[WINDOW];
        int[] outstanding = new int[WINDOW];
        Arrays.fill(outstanding, -1);
        byte[] buffer = new byte[SIZE.packetBytes()];
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
            for (int i = p * K; i < Math.min(data.length, (p + 1) * K); i++) {
                sum[i] = result.element(i - p * K);
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
        ByteBuffer bytes = ByteBuffer.allocate(SIZE.packetBytes());
        AggregationPacket packet = new AggregationPacket().wrap(bytes, 0)
                .header(SIZE, jobId, p, slot(p), set(p), 0, 0);
        for (int i = 0; i < K; i++) {
            int at = p * K + i;
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
