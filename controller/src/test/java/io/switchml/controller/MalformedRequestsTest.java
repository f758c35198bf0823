package io.switchml.controller;

import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.switchml.controller.compat.proto.SessionGrpc;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.StatusRequest;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A flood of garbage protobuf messages at the controller: each is refused with INVALID_ARGUMENT, the
 * log gets a line per peer per minute instead of a stack trace per message, and the switch still serves.
 */
class MalformedRequestsTest extends ControllerTestSupport {
    private static final int MESSAGES = 5_000;
    @Test
    void garbageIsRefusedAndLoggedOncePerPeerNotOncePerMessage() throws Exception {
        List<String> methods = List.of(ControllerGrpc.getJoinMethod().getFullMethodName(),
                ControllerGrpc.getStatusMethod().getFullMethodName(),
                SessionGrpc.getUdpSessionMethod().getFullMethodName());
        List<LogRecord> grpcRecords = new CopyOnWriteArrayList<>();
        Logger grpcLogger = Logger.getLogger("io.grpc"); // held: JUL keeps loggers weakly
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    grpcRecords.add(record);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        grpcLogger.addHandler(handler);
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream err = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8)); // slf4j-simple writes to System.err
        List<Status> answers = new ArrayList<>();
        try {
            List<Future<byte[]>> calls = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                MethodDescriptor<byte[], byte[]> method = RawCalls.method(methods.get(i % methods.size()),
                        MethodDescriptor.MethodType.UNARY);
                calls.add(ClientCalls.futureUnaryCall(channel.newCall(method,
                        CallOptions.DEFAULT.withDeadlineAfter(CLIENT_DEADLINE_MS, TimeUnit.MILLISECONDS)), RawCalls.GARBAGE[i % RawCalls.GARBAGE.length]));
                if (calls.size() == 100 || i == MESSAGES - 1) {
                    for (Future<byte[]> call : calls) {
                        answers.add(RawCalls.statusOf(call, CLIENT_DEADLINE_MS));
                    }
                    calls.clear();
                }
            }
        } finally {
            System.setErr(err);
            grpcLogger.removeHandler(handler);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        err.print(log);

        assertThat(answers).hasSize(MESSAGES).allSatisfy(s -> {
            assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(s.getDescription()).startsWith("malformed request: the message is not a ");
        });
        assertThat(grpcRecords).as("gRPC's own warnings (a stack trace each)").isEmpty();
        assertThat(log.lines().filter(l -> l.contains("malformed request from 127.0.0.1 to "))).hasSize(1);
        assertThat(log).doesNotContain("\tat ").hasSizeLessThan(4096);

        // The switch still serves its legitimate users.
        JoinResponse joined = stub().join(joinRequest("after-the-flood", 0, 1));
        assertThat(service.dataplane().job(joined.getJobNumber())).isPresent();
        assertThat(stub().status(StatusRequest.getDefaultInstance()).getJobsList()).hasSize(1);
    }
}
