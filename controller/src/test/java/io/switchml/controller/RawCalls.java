package io.switchml.controller;

import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** gRPC calls of raw bytes, for the tests that send a service what no client of ours would. */
public final class RawCalls {
    /** Bytes no protobuf parser takes: field 1 with the invalid wire type 7, a truncated varint, tag zero. */
    public static final byte[][] GARBAGE = {{0x0F, 1, 2, 3}, {0x08, (byte) 0xFF}, {0x00, 0x42, 0x42}};

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private RawCalls() {
    }

    /** How a call ended: OK, its error's status, or DEADLINE_EXCEEDED when it has not ended within {@code timeoutMs}. */
    public static Status statusOf(Future<?> call, long timeoutMs) throws InterruptedException {
        try {
            call.get(timeoutMs, TimeUnit.MILLISECONDS);
            return Status.OK;
        } catch (ExecutionException e) {
            return Status.fromThrowable(e.getCause());
        } catch (TimeoutException e) {
            return Status.DEADLINE_EXCEEDED;
        }
    }

    /** The method of that full name, taking and answering raw bytes. */
    public static MethodDescriptor<byte[], byte[]> method(String fullName, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(type).setFullMethodName(fullName)
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    }
}
