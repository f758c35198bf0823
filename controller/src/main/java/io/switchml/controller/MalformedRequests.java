package io.switchml.controller;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Refuses a request whose message does not parse with INVALID_ARGUMENT, and logs it once per peer
 * per interval ({@link PeerLogLimiter}). Left to gRPC, the parse fails in gRPC's executor, which logs
 * a stack trace per message: 5,000 garbage messages wrote 11 MB of log, from anyone who reaches the
 * port (without mutual TLS, before any credential is checked).
 */
final class MalformedRequests implements ServerInterceptor {
    /** How often one peer's malformed requests are logged: the first of each minute, the rest as a count. */
    static final Duration LOG_INTERVAL = Duration.ofMinutes(1);
    private static final Logger LOG = LoggerFactory.getLogger(MalformedRequests.class);

    private final PeerLogLimiter log;

    MalformedRequests(PeerLogLimiter log) {
        this.log = log;
    }

    /** Logs to this class's logger, at most a line per peer per {@link #LOG_INTERVAL}; {@code timer} writes the counts. */
    static MalformedRequests loggingOncePerMinute(ScheduledExecutorService timer) {
        PeerLogLimiter log = new PeerLogLimiter("malformed requests", LOG_INTERVAL, System::nanoTime, LOG::warn);
        timer.scheduleAtFixedRate(log::flush, LOG_INTERVAL.toSeconds(), LOG_INTERVAL.toSeconds(), TimeUnit.SECONDS);
        return new MalformedRequests(log);
    }

    /**
     * The service with its requests parsed inside this interceptor's listener, where a failure can be
     * caught: gRPC hands the listener the message's bytes, and the service's own parser runs in onMessage.
     */
    ServerServiceDefinition guard(ServerServiceDefinition service) {
        return ServerInterceptors.intercept(ServerInterceptors.useInputStreamMessages(service), this);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        // guard() makes every request an InputStream; the listener below is written for that.
        ServerCall<InputStream, R> raw = (ServerCall<InputStream, R>) call;
        ClosingCall<R> closing = new ClosingCall<>(raw);
        ServerCall.Listener<InputStream> listener = (ServerCall.Listener<InputStream>) next.startCall((ServerCall<Q, R>) closing, headers);
        return (ServerCall.Listener<Q>) new ForwardingServerCallListener.SimpleForwardingServerCallListener<InputStream>(listener) {
            /** Once refused, the service hears nothing more of the call (it would answer a request it never had). */
            private boolean refused;

            @Override
            public void onMessage(InputStream message) {
                if (refused) {
                    return;
                }
                try {
                    super.onMessage(message);
                } catch (StatusRuntimeException e) {
                    if (!(e.getCause() instanceof InvalidProtocolBufferException malformed)) {
                        throw e;
                    }
                    refused = true;
                    String method = call.getMethodDescriptor().getFullMethodName();
                    String peer = peer(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
                    log.log(peer, "malformed request from " + peer + " to " + method + ", refused with INVALID_ARGUMENT: "
                            + malformed.getMessage());
                    closing.closeOnce(Status.INVALID_ARGUMENT.withDescription("malformed request: the message is not a "
                            + call.getMethodDescriptor().getBareMethodName() + " request of this switch's protocol ("
                            + malformed.getMessage() + ")"));
                }
            }

            @Override
            public void onHalfClose() {
                if (!refused) {
                    super.onHalfClose();
                }
            }

            @Override
            public void onReady() {
                if (!refused) {
                    super.onReady();
                }
            }
        };
    }

    /** The peer's address without its port: one client's connections come from many ports. */
    private static String peer(SocketAddress address) {
        return address instanceof InetSocketAddress inet && inet.getAddress() != null
                ? inet.getAddress().getHostAddress() : String.valueOf(address);
    }

    /**
     * Remembers whether the call was closed (an interceptor inside may have refused it already), so that
     * a refusal never closes it a second time. The service cannot close it concurrently: it has had no request.
     */
    private static final class ClosingCall<R> extends ForwardingServerCall.SimpleForwardingServerCall<InputStream, R> {
        private volatile boolean closed;

        ClosingCall(ServerCall<InputStream, R> call) {
            super(call);
        }

        @Override
        public void close(Status status, Metadata trailers) {
            closed = true;
            super.close(status, trailers);
        }

        void closeOnce(Status status) {
            if (!closed) {
                close(status, new Metadata());
            }
        }
    }
}
