package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.switchml.controller.proto.ControllerGrpc;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Security round 4, finding 6, and round 5, item 4: well-formed calls that make the controller log (a job of a
 * long name joined and left, again and again) cost a tenant at most {@link JobLog#PER_TENANT} lines a minute, the
 * dataplane's own lines about the job included; the rest are counted, and the switch goes on serving. Requests
 * that gRPC's transport refuses (a header block over its limit, a message over its maximum) are counted and
 * written once a minute, never a stack trace each. Each case writes under 100 KB (the target per minute).
 */
class JobLogFloodTest extends ControllerTestSupport {
    private static final int CYCLES = 300;

    @Test
    void joinAndLeaveChurnWithLongNamesIsCountedNotLogged() {
        String longName = "churn-" + "x".repeat(190);
        try (LogBytes log = new LogBytes()) {
            for (int i = 0; i < CYCLES; i++) {
                int number = formJob(longName + i, 1, 40_000);
                stub().leave(leave(number, 0));
            }
            System.out.printf("join+leave churn: %d bytes, %d lines of log%n", log.bytes(), log.lines());
            assertThat(log.bytes()).as("bytes of log the churn wrote").isLessThan(100_000);
        }
        // Four lines a cycle (the controller's installed and ended, the dataplane's installed and removed); all from
        // this process's user, one tenant.
        long notWritten = service.logLinesNotWritten();
        long written = 4L * CYCLES - notWritten;
        System.out.printf("join+leave churn: %d cycles, %d lines about jobs written, %d counted (%d B of names each)%n",
                CYCLES, written, notWritten, longName.length() + 3);
        assertThat(written).isBetween(1L, (long) JobLog.PER_TENANT);

        // The switch still forms a job of two ranks.
        int number = formJob("after-the-churn", 2, 41_000);
        assertThat(service.dataplane().job(number)).isPresent();
    }

    /**
     * 1 000 requests, each on a new connection, whose header block (12 KB) exceeds the limit gRPC's transport
     * takes (10 KB): Netty refuses each ("Header size exceeded") and gRPC logged each with a stack trace (3.67 MB in
     * all). Sent as raw HTTP/2, since gRPC's own client refuses to send what the server said it would refuse.
     */
    @Test
    void oversizedHeadersAreCountedNotLoggedEach() throws IOException {
        long before = TransportErrorLog.count();
        int calls = 1_000;
        try (LogBytes log = new LogBytes()) {
            for (int i = 0; i < calls; i++) {
                oversizedHeaders(service.controllerPort(), 12 * 1024);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (TransportErrorLog.count() - before < calls && System.nanoTime() < deadline) {
                Thread.onSpinWait(); // the server notes the last connection's end just after the client saw it
            }
            long counted = TransportErrorLog.count() - before;
            System.out.printf("%d calls with a 12 KB header: %d refusals counted, %d bytes and %d lines of log%n", calls,
                    counted, log.bytes(), log.lines());
            assertThat(counted).as("refusals counted").isEqualTo(calls);
            assertThat(log.bytes()).as("bytes of log the oversized headers wrote").isLessThan(100_000);
            assertThat(log.lines()).as("lines of log").isLessThan(20);
        }
        assertThat(formJob("after-the-headers", 2, 41_000)).isNotNegative();
    }

    /** 20 Join messages of 5 MB (the limit is 4 MB): refused, counted, one line. */
    @Test
    void oversizedMessagesAreCountedNotLoggedEach() {
        long before = TransportErrorLog.count();
        int calls = 20;
        MethodDescriptor<byte[], byte[]> join = RawCalls.method(ControllerGrpc.getJoinMethod().getFullMethodName(),
                MethodDescriptor.MethodType.UNARY);
        byte[] big = new byte[5 << 20];
        try (LogBytes log = new LogBytes()) {
            for (int i = 0; i < calls; i++) {
                io.grpc.Status status = io.grpc.Status.fromThrowable(org.assertj.core.api.Assertions.catchThrowable(
                        () -> ClientCalls.blockingUnaryCall(channel, join, CallOptions.DEFAULT.withDeadlineAfter(20,
                                TimeUnit.SECONDS), big)));
                assertThat(status.getCode()).isEqualTo(io.grpc.Status.Code.RESOURCE_EXHAUSTED);
            }
            long counted = TransportErrorLog.count() - before;
            System.out.printf("%d Join messages of 5 MB: %d refusals counted, %d bytes and %d lines of log%n", calls,
                    counted, log.bytes(), log.lines());
            assertThat(counted).as("refusals counted").isEqualTo(calls);
            assertThat(log.bytes()).as("bytes of log the oversized messages wrote").isLessThan(100_000);
            assertThat(log.lines()).as("lines of log").isLessThan(20);
        }
        assertThat(formJob("after-the-messages", 2, 41_000)).isNotNegative();
    }

    /**
     * One HTTP/2 connection that sends a Join whose header block carries a header of {@code size} bytes, reads
     * what the server answers until it resets the stream or closes, and closes.
     */
    private static void oversizedHeaders(int port, int size) throws IOException {
        ByteArrayOutputStream block = new ByteArrayOutputStream();
        header(block, ":method", "POST");
        header(block, ":scheme", "http");
        header(block, ":path", ControllerGrpc.getJoinMethod().getFullMethodName().replaceFirst("^", "/"));
        header(block, ":authority", "127.0.0.1:" + port);
        header(block, "content-type", "application/grpc");
        header(block, "te", "trailers");
        header(block, "x-big", "x".repeat(size));
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            frame(out, 0x4, 0, 0, new byte[0]); // SETTINGS, none
            frame(out, 0x1, 0x4, 1, block.toByteArray()); // HEADERS, END_HEADERS, stream 1
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] head = new byte[9];
            try {
                while (in.readNBytes(head, 0, 9) == 9) {
                    int length = (head[0] & 0xFF) << 16 | (head[1] & 0xFF) << 8 | head[2] & 0xFF;
                    int type = head[3];
                    in.readNBytes(length);
                    if (type == 0x3 || type == 0x7) { // RST_STREAM or GOAWAY: refused
                        return;
                    }
                    if (type == 0x4 && (head[4] & 1) == 0) {
                        frame(out, 0x4, 0x1, 0, new byte[0]); // acknowledge the server's settings
                    }
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the server neither reset the oversized request nor closed within 5 s", e);
            }
        }
    }

    private static void frame(OutputStream out, int type, int flags, int stream, byte[] payload) throws IOException {
        out.write(new byte[] {(byte) (payload.length >>> 16), (byte) (payload.length >>> 8), (byte) payload.length,
                (byte) type, (byte) flags, (byte) (stream >>> 24), (byte) (stream >>> 16), (byte) (stream >>> 8),
                (byte) stream});
        out.write(payload);
    }

    /** HPACK: a literal header field without indexing, of a new name, neither Huffman-coded. */
    private static void header(ByteArrayOutputStream block, String name, String value) {
        block.write(0x00);
        string(block, name.getBytes(StandardCharsets.US_ASCII));
        string(block, value.getBytes(StandardCharsets.US_ASCII));
    }

    private static void string(ByteArrayOutputStream block, byte[] bytes) {
        int n = bytes.length;
        if (n < 127) {
            block.write(n);
        } else {
            block.write(127);
            n -= 127;
            while (n >= 128) {
                block.write(n % 128 + 128);
                n /= 128;
            }
            block.write(n);
        }
        block.writeBytes(bytes);
    }
}
