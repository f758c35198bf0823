package io.switchml.controller;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Filter;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lines that gRPC's Netty transport writes, with a stack trace, for each request or connection it refuses
 * before any service sees it (security round 5): a header block over the limit (Netty's "Header size exceeded",
 * which ends the connection: "Transport failed"; or "Stream Error"), a message over the maximum size ("Exception
 * processing message", gRPC's deframeFailed). Anyone
 * who reaches the port causes them, one per call: 1 000 calls with a 12 KB header wrote 3.67 MB. This filter
 * takes them off gRPC's loggers, counts them ({@link #count}, the metrics' {@code switchml_oversized_requests_total})
 * and writes the first of a minute as one line without its stack trace, and the count of the rest when the minute
 * ends, as {@link MalformedRequests} does for garbage.
 */
final class TransportErrorLog implements Filter {
    static final Duration INTERVAL = Duration.ofMinutes(1);
    private static final org.slf4j.Logger LOG = LoggerFactory.getLogger(TransportErrorLog.class);
    /** gRPC's shaded Netty transport's loggers, held here so that their filter stays (JUL keeps loggers weakly). */
    private static final List<Logger> LOGGERS = List.of(
            Logger.getLogger("io.grpc.netty.shaded.io.grpc.netty.NettyServerHandler"),
            Logger.getLogger("io.grpc.netty.shaded.io.grpc.netty.NettyServerStream"),
            Logger.getLogger("io.grpc.netty.shaded.io.grpc.netty.NettyServerTransport.connections"),
            Logger.getLogger("io.grpc.netty.NettyServerTransport.connections"),
            Logger.getLogger("io.grpc.netty.NettyServerHandler"),
            Logger.getLogger("io.grpc.netty.NettyServerStream"));
    private static final TransportErrorLog INSTANCE = new TransportErrorLog();

    private final LongAdder count = new LongAdder();
    private final PeerLogLimiter limiter = new PeerLogLimiter("refused oversized or broken requests", INTERVAL, 1,
            Integer.MAX_VALUE, System::nanoTime, LOG::warn);

    private TransportErrorLog() {
    }

    /** Puts the filter on gRPC's transport loggers (once per JVM) and has {@code timer} write the counts each minute. */
    static TransportErrorLog install(ScheduledExecutorService timer) {
        for (Logger logger : LOGGERS) {
            if (logger.getFilter() != INSTANCE) {
                logger.setFilter(INSTANCE);
            }
        }
        timer.scheduleAtFixedRate(INSTANCE.limiter::flush, INTERVAL.toSeconds(), INTERVAL.toSeconds(), TimeUnit.SECONDS);
        return INSTANCE;
    }

    /** Requests refused by the transport so far (every switch of this JVM). */
    static long count() {
        return INSTANCE.count.sum();
    }

    @Override
    public boolean isLoggable(LogRecord record) {
        if (record.getThrown() == null || record.getLevel().intValue() < java.util.logging.Level.INFO.intValue()) {
            return true; // not a refused request's trace: as gRPC writes it
        }
        count.increment();
        Throwable cause = record.getThrown();
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String message = String.valueOf(cause.getMessage());
        if (message.length() > 200) {
            message = message.substring(0, 200) + "...";
        }
        limiter.log("transport", "gRPC refused a request before any service saw it: " + record.getMessage() + ": "
                + cause.getClass().getSimpleName() + ": " + message.replaceAll("\\p{Cntrl}", " ")
                + " (switchml_oversized_requests_total counts them)");
        return false;
    }
}
